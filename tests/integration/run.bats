#!/usr/bin/env bats
# husk run: output, exit codes, and many containers in a row.

load helpers

@test "run: busybox echo prints the text" {
	local id
	id="$(new_id)"
	set_args echo "hello from husk"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "hello from husk" ] || fail "output: $output"
	assert_no_container "$id"
}

@test "run: without --bundle uses the current directory" {
	local id
	id="$(new_id)"
	set_args echo "bundle is cwd"
	cd "$BUNDLE"
	run -0 husk run "$id" </dev/null
	[ "$output" = "bundle is cwd" ] || fail "output: $output"
}

@test "run: stdin is passed through" {
	local id
	id="$(new_id)"
	set_args sh -c 'read line; echo "got $line"'
	run -0 husk run --bundle "$BUNDLE" "$id" <<<"piped-text"
	[ "$output" = "got piped-text" ] || fail "output: $output"
}

@test "run: stderr is passed through" {
	local id
	id="$(new_id)"
	set_args sh -c 'echo to-stderr >&2'
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "" ] || fail "stdout: $output"
	assert_contains "$stderr" to-stderr
}

@test "run: a container exiting 3 makes husk run exit 3" {
	local id
	id="$(new_id)"
	set_args sh -c 'exit 3'
	run -3 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_no_container "$id"
}

@test "run: a process killing itself with SIGKILL makes husk run exit 137" {
	local id
	id="$(new_id)"
	# As PID 1 of a new pid namespace the shell could not kill itself (init
	# ignores signals it has no handler for), so share the host's pid ns.
	del_ns pid
	set_args sh -c 'kill -9 $$'
	run -137 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_no_container "$id"
}

@test "run: a container killed by husk kill KILL makes husk run exit 137" {
	local id rc
	id="$(new_id)"
	set_args sleep 100
	# The binary itself in the background (not the husk wrapper), so $! is
	# husk run's pid.
	"$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$id" </dev/null >"$TEST_DIR/out" 2>&1 3>&- &
	local runner=$!
	track_bg "$runner"
	wait_for_status "$id" running
	run -0 husk kill "$id" KILL
	rc=0
	wait "$runner" || rc=$?
	[ "$rc" -eq 137 ] || fail "husk run exited $rc, want 137: $(cat "$TEST_DIR/out")"
	assert_no_container "$id"
}

@test "run: state, list and kill answer while husk run waits (no lock held)" {
	local id
	id="$(new_id)"
	set_args sleep 100
	"$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$id" </dev/null >"$TEST_DIR/out" 2>&1 3>&- &
	track_bg $!
	sleep 1
	local HUSK_TIMEOUT=5
	run -0 husk state "$id"
	[ "$(jq -r .status <<<"$output")" = running ] || fail "state: $output"
	run -0 husk list -q
	[ "$output" = "$id" ] || fail "list: $output"
	run -0 husk kill "$id" KILL
}

@test "run: the process runs with the config's env, cwd and args" {
	local id
	id="$(new_id)"
	update_config '.process.env += ["HUSK_TEST_VAR=forty-two"] | .process.cwd = "/tmp"'
	set_args sh -c 'echo "$HUSK_TEST_VAR $(pwd) $0 $1"' arg0 arg1
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "forty-two /tmp arg0 arg1" ] || fail "output: $output"
}

@test "run: the root filesystem is the bundle's rootfs, readonly as configured" {
	local id
	id="$(new_id)"
	echo "marker-$id" >"$BUNDLE/rootfs/marker"
	update_config '.root.readonly = true'
	set_args sh -c 'cat /marker; touch /newfile 2>/dev/null && echo writable || echo readonly'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = "marker-$id" ] || fail "output: $output"
	[ "${lines[1]}" = "readonly" ] || fail "output: $output"
	[ ! -e "$BUNDLE/rootfs/newfile" ]
}

@test "run: /proc and /dev are mounted inside the container" {
	local id
	id="$(new_id)"
	set_args sh -c 'test -r /proc/self/status && test -c /dev/null && test -c /dev/zero && echo > /dev/null && echo ok'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "ok" ] || fail "output: $output"
}

@test "run --detach: the container keeps running after husk returns" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	husk run --detach --bundle "$BUNDLE" --pid-file "$TEST_DIR/pid" "$id" \
		</dev/null >"$TEST_DIR/out" 2>&1 3>&- || fail "run --detach: $(cat "$TEST_DIR/out")"
	[ "$(container_status "$id")" = running ] || fail "status: $(container_status "$id")"
	pid="$(cat "$TEST_DIR/pid")"
	pid_alive "$pid" || fail "pid $pid from --pid-file is not alive"
	run -0 husk delete --force "$id"
	assert_no_container "$id"
}

# Go >= 1.22 aborts a runtime started on top of a raw clone(2)'s stale glibc
# state (runc issue 4233): only shows up over many starts.
@test "run: a foreground run forwards the signals husk receives, SIGUSR1 included, to the process" {
	local id bg husk_pid i code=0
	id="$(new_id)"
	update_config '.root.readonly = false'
	rm -f "$BUNDLE/rootfs/tmp/ready"
	set_args sh -c 'trap "echo got USR1; exit 7" USR1; touch /tmp/ready; while :; do sleep 0.05; done'
	husk run --bundle "$BUNDLE" "$id" >"$TEST_DIR/sig.out" 2>&1 </dev/null &
	bg=$!
	track_bg "$bg"
	for ((i = 0; i < 100; i++)); do [ -e "$BUNDLE/rootfs/tmp/ready" ] && break; sleep 0.05; done
	[ -e "$BUNDLE/rootfs/tmp/ready" ] || fail "the container's shell never started: $(cat "$TEST_DIR/sig.out")"
	husk_pid="$(pgrep -f -- "^$HUSK_BIN --root $HUSK_ROOT run --bundle $BUNDLE $id")"
	[ -n "$husk_pid" ] || fail "no husk run process found"
	# Signals other than TERM, INT, HUP and QUIT are caught once the
	# process has run 10 ms (libcontainer/launch/waiter.go): send until one lands.
	for ((i = 0; i < 100; i++)); do
		kill -USR1 "$husk_pid" 2>/dev/null || break
		sleep 0.05
	done
	# husk run exited (the loop broke) or never caught USR1: only then kill
	# (the background subshell outlives husk run by a moment).
	if ((i == 100)); then husk kill "$id" KILL || true; fi
	wait "$bg" || code=$?
	[ "$code" -eq 7 ] || fail "exit code $code, want 7: $(cat "$TEST_DIR/sig.out")"
	[ "$(cat "$TEST_DIR/sig.out")" = "got USR1" ] || fail "output: $(cat "$TEST_DIR/sig.out")"
	assert_no_container "$id"
}

@test "run: 50 containers in a row all exit 0" {
	local i id
	set_args true
	for ((i = 0; i < 50; i++)); do
		id="$(new_id)"
		run husk run --bundle "$BUNDLE" "$id" </dev/null
		[ "$status" -eq 0 ] || fail "run $i ($id) exited $status: $output"
	done
	run -0 husk list -q
	[ -z "$output" ] || fail "containers left: $output"
}

# The Go runtime prints a SCHED line with its P count from its first
# moments (GODEBUG=schedtrace), before any of husk's Go code runs; the
# container sleeps so that one is printed. `husk init` does not inherit
# GODEBUG, so every line is the husk process's own.
@test "run: husk's Go runtime starts on one P, unless the caller sets GOMAXPROCS" {
	[ "$(nproc)" -ge 2 ] || skip "one CPU: the runtime's default is one P too ($(nproc) CPUs)"
	unset GOMAXPROCS
	set_args sleep 0.2
	GODEBUG=schedtrace=50 run -0 --separate-stderr husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	sched_procs 1
	GOMAXPROCS=2 GODEBUG=schedtrace=50 run -0 --separate-stderr husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	sched_procs 2
}

# A start allocates about 1 MiB; 150 KB of environment (4 MiB at the
# start) took the heap past the runtime's first goal, and its GC cycle ran
# inside the start. husk's collector is off until a command waits
# (gc.go); a caller's GOGC is kept.
@test "run: no GC cycle while husk starts a container, unless the caller sets GOGC" {
	local id
	update_config '.process.env += [range(150) | "V\(.)=" + ("x" * 1000)]'
	set_args sleep 30
	id="$(new_id)"
	GODEBUG=gctrace=1 run -0 --separate-stderr husk run -d --bundle "$BUNDLE" "$id" </dev/null
	! grep '^gc [0-9]' <<<"$stderr" || fail "a GC cycle ran during the start: $stderr"
	husk delete -f "$id"
	id="$(new_id)"
	GOGC=10 GODEBUG=gctrace=1 run -0 --separate-stderr husk run -d --bundle "$BUNDLE" "$id" </dev/null
	grep -q '^gc [0-9]' <<<"$stderr" || fail "GOGC=10 was not kept: no GC cycle: $stderr"
	husk delete -f "$id"
}

# sched_procs N: every SCHED line in $stderr says gomaxprocs=N.
sched_procs() {
	[[ "$stderr" == *"SCHED "* ]] || fail "no SCHED line on stderr: $stderr"
	[ "$(grep -o 'gomaxprocs=[0-9]*' <<<"$stderr" | sort -u)" = "gomaxprocs=$1" ] ||
		fail "want gomaxprocs=$1 in every SCHED line: $stderr"
}

# When a thread has looked up /proc/thread-self, the kernel flushes its
# /proc/<pid>/task/<tid> dentries only after telling the parent that the
# process exited, and the parent's reap (containerd's shim, a shell) spins
# until the flush is done: about a millisecond of CPU a reap when many
# containers start at once. husk reads /proc/self instead.
@test "run, exec, delete: no husk process looks up /proc/thread-self" {
	command -v strace >/dev/null || skip "strace is not installed"
	local id trace="$BATS_TEST_TMPDIR/trace"
	set_args true
	strace -f -qq -e trace=%file -o "$trace" "$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$(new_id)" \
		</dev/null >/dev/null 2>&1 || fail "run failed"
	grep -q 'mountinfo' "$trace" || fail "the trace shows no mountinfo read: $(head -c 2000 "$trace")"
	id="$(new_id)"
	set_args sleep 30
	husk run -d --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 || fail "run -d failed"
	strace -f -qq -e trace=%file -o "$trace.exec" "$HUSK_BIN" --root "$HUSK_ROOT" exec "$id" true ||
		fail "exec failed"
	strace -f -qq -e trace=%file -o "$trace.delete" "$HUSK_BIN" --root "$HUSK_ROOT" delete -f "$id" ||
		fail "delete failed"
	! grep -h 'thread-self' "$trace" "$trace.exec" "$trace.delete" || fail "a husk process looked up /proc/thread-self"
}
