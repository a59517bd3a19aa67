#!/usr/bin/env bats
# containerd 1.6 via ctr drives the runtime under test through its shim
# (io.containerd.runc.v2 with --runc-binary): output, exit codes, exec, ps,
# pause/resume, kill, delete, a detached task, a tty.

load helpers

setup_file() {
	runtime_ready
	export SUITE_DIR NS
	SUITE_DIR="$(new_suite_dir)"
	NS="hctr$$"
	containerd_start "$SUITE_DIR"
	local tar
	tar="$(build_image_tar)" || fail "cannot build the busybox image"
	ctr_ images import "$tar" >/dev/null || fail "ctr images import $tar failed"
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	containerd_stop "$SUITE_DIR"
	remove_cgroup_parent "$NS"
	clean_leaks "$SUITE_DIR" "$NS"
	rm -rf "$SUITE_DIR"
}

setup() {
	IDS_FILE="$BATS_TEST_TMPDIR/ids"
	: >"$IDS_FILE"
}

# Every test removes its tasks and containers; a leftover is a failure.
teardown() {
	local id left=""
	[ -e "$SUITE_DIR/containerd.pid" ] || return 0 # the last test stopped it
	for id in $(cat "$IDS_FILE"); do
		ctr_ task kill -s SIGKILL "$id" >/dev/null 2>&1 || true
		ctr_ task delete -f "$id" >/dev/null 2>&1 || true
		ctr_ containers delete "$id" >/dev/null 2>&1 || true
	done
	left="$(ctr_ containers ls -q 2>/dev/null)"
	[ -z "$left" ] || fail "containers left: $left"
}

ctr_() {
	timeout -k 5 "$CLIENT_TIMEOUT" ctr --address "$SUITE_DIR/c.sock" -n "$NS" "$@"
}

# ctr_run [ctr run flags] ID ARGS...: ctr run with the runtime under test.
ctr_run() {
	ctr_ run --runc-binary "$CLIENT_RUNTIME" --runc-root "$SUITE_DIR/runc" --fifo-dir "$SUITE_DIR/fifo" "$@"
}

# cid prints a fresh container id and remembers it for the teardown.
cid() {
	local id="t${BATS_TEST_NUMBER}-$RANDOM"
	echo "$id" >>"$IDS_FILE"
	echo "$id"
}

# task_status ID prints the STATUS column of `ctr task ls` for ID.
task_status() {
	ctr_ task ls | awk -v id="$1" '$1 == id {print $3}'
}

# task_pid ID prints the PID column of `ctr task ls` for ID.
task_pid() {
	ctr_ task ls | awk -v id="$1" '$1 == id {print $2}'
}

# run_detached ID ARGS...: a detached task; ctr has exited when this returns.
run_detached() {
	local id="$1"
	shift
	ctr_run -d "$IMAGE_REF" "$id" "$@" </dev/null >/dev/null 3>&- ||
		fail "ctr run -d $id failed"
}

@test "ctr run: output and a zero exit code" {
	local id
	id="$(cid)"
	run -0 --separate-stderr ctr_run --rm "$IMAGE_REF" "$id" sh -c 'echo hello; echo to-stderr >&2'
	[ "$output" = "hello" ] || fail "stdout: $output"
	[ "$stderr" = "to-stderr" ] || fail "stderr: $stderr"
}

@test "ctr run: the container's exit code" {
	local id
	id="$(cid)"
	run -3 ctr_run --rm "$IMAGE_REF" "$id" sh -c 'exit 3'
	id="$(cid)"
	run -0 ctr_run --rm "$IMAGE_REF" "$id" true
}

@test "ctr run: a missing command fails with the runtime's reason, and nothing stays" {
	local id
	id="$(cid)"
	run ! ctr_run --rm "$IMAGE_REF" "$id" /no/such/cmd
	assert_contains "$output" "/no/such/cmd" "no such file or directory"
}

@test "ctr run: stdin reaches the container" {
	local id
	id="$(cid)"
	run -0 ctr_run --rm "$IMAGE_REF" "$id" sh -c 'read line; echo "got $line"' <<<"via-stdin"
	[ "$output" = "got via-stdin" ] || fail "output: $output"
}

@test "ctr run -d: a detached task survives ctr and is killed (exit status 137) and deleted" {
	local id pid
	id="$(cid)"
	run_detached "$id" sleep 1000
	[ "$(task_status "$id")" = RUNNING ] || fail "task $id: $(task_status "$id")"
	pid="$(task_pid "$id")"
	pid_alive "$pid" || fail "task pid $pid not alive after ctr exited"
	run -0 ctr_ task kill -s SIGKILL "$id"
	wait_until 10 bash -c "[ \"\$(ctr --address $SUITE_DIR/c.sock -n $NS task ls | awk '\$1 == \"$id\" {print \$3}')\" = STOPPED ]" ||
		fail "task $id: $(task_status "$id") after SIGKILL"
	run -0 ctr_ task delete "$id"
	assert_contains "$output" "137"
	run -0 ctr_ containers delete "$id"
	assert_pid_gone "$pid"
}

@test "ctr task ps lists the task's processes" {
	local id pid
	id="$(cid)"
	run_detached "$id" sh -c 'sleep 1000 & sleep 1000'
	pid="$(task_pid "$id")"
	wait_until 5 bash -c "[ \$(ctr --address $SUITE_DIR/c.sock -n $NS task ps $id | tail -n +2 | wc -l) -eq 2 ]" ||
		fail "ctr task ps $id: $(ctr_ task ps "$id")"
	run -0 ctr_ task ps "$id"
	assert_contains "$output" "$pid"
}

@test "ctr task pause and resume" {
	local id pid
	id="$(cid)"
	run_detached "$id" sleep 1000
	pid="$(task_pid "$id")"
	run -0 ctr_ task pause "$id"
	[ "$(task_status "$id")" = PAUSED ] || fail "after pause: $(task_status "$id")"
	run -0 cat "/sys/fs/cgroup/freezer/$NS/$id/freezer.state"
	[ "$output" = FROZEN ] || fail "freezer.state: $output"
	run -0 ctr_ task resume "$id"
	[ "$(task_status "$id")" = RUNNING ] || fail "after resume: $(task_status "$id")"
	run -0 ctr_ task delete -f "$id"
}

@test "ctr task delete --force of a paused task kills and removes it" {
	local id pid
	id="$(cid)"
	run_detached "$id" sleep 1000
	pid="$(task_pid "$id")"
	run -0 ctr_ task pause "$id"
	run -0 ctr_ task delete --force "$id"
	assert_pid_gone "$pid"
	[ -z "$(task_status "$id")" ] || fail "task still listed: $(task_status "$id")"
}

@test "ctr task kill --all signals every process of the task" {
	local id
	id="$(cid)"
	run_detached "$id" sh -c 'trap "" TERM; sleep 1000 & wait'
	run -0 ctr_ task kill --all -s SIGKILL "$id"
	wait_until 10 bash -c "[ \"\$(ctr --address $SUITE_DIR/c.sock -n $NS task ls | awk '\$1 == \"$id\" {print \$3}')\" = STOPPED ]" ||
		fail "task $id: $(task_status "$id") after kill --all"
	run -0 ctr_ task delete "$id"
}

@test "ctr task delete: refused while running, --force kills and removes" {
	local id pid
	id="$(cid)"
	run_detached "$id" sleep 1000
	pid="$(task_pid "$id")"
	run ! ctr_ task delete "$id"
	[ "$(task_status "$id")" = RUNNING ] || fail "after a refused delete: $(task_status "$id")"
	run -0 ctr_ task delete --force "$id"
	assert_pid_gone "$pid"
	[ -z "$(task_status "$id")" ] || fail "task still listed: $(task_status "$id")"
}

@test "ctr task kill of a task that already exited is not an error for containerd" {
	local id
	id="$(cid)"
	run_detached "$id" true
	wait_until 10 bash -c "[ \"\$(ctr --address $SUITE_DIR/c.sock -n $NS task ls | awk '\$1 == \"$id\" {print \$3}')\" = STOPPED ]" ||
		fail "task $id: $(task_status "$id")"
	run ctr_ task kill -s SIGKILL "$id"
	[[ "$output" != *"does not exist"* ]] || fail "kill of an exited task: $output"
	run -0 ctr_ task delete "$id"
}

@test "ctr task exec: output and exit code of a process in a running task" {
	require_exec
	local id
	id="$(cid)"
	run_detached "$id" sleep 1000
	run -0 ctr_ task exec --fifo-dir "$SUITE_DIR/fifo" --exec-id e1 "$id" sh -c 'echo exec-ok'
	[ "$output" = exec-ok ] || fail "output: $output"
	run -4 ctr_ task exec --fifo-dir "$SUITE_DIR/fifo" --exec-id e2 "$id" sh -c 'exit 4'
	run -0 ctr_ task delete -f "$id"
}

@test "ctr run --tty: the process has a terminal" {
	require_cmd script bsdutils
	local id
	id="$(cid)"
	run -0 script -qec "ctr --address $SUITE_DIR/c.sock -n $NS run --rm -t --runc-binary $CLIENT_RUNTIME --runc-root $SUITE_DIR/runc --fifo-dir $SUITE_DIR/fifo $IMAGE_REF $id sh -c 'test -t 0 && test -t 1 && echo TTY-YES'" /dev/null </dev/null
	assert_contains "$output" "TTY-YES"
}

@test "zz: containerd stops and nothing is left behind" {
	containerd_stop "$SUITE_DIR"
	remove_cgroup_parent "$NS"
	assert_nothing_left "$SUITE_DIR" "$NS"
}
