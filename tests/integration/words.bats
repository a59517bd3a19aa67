#!/usr/bin/env bats
# Words that scripts grep (issue 27, items 7, 10 and 11): where runc's
# message or --debug line has a stable key phrase, husk's has it too, with
# husk's own context (the field, the value) around it. Each phrase is
# runc's exact text (runc's tests grep the same).

load helpers

# deadline_refused: the host's kernel refuses SCHED_DEADLINE to a task
# not allowed every CPU (EPERM), which is what runc's words are about.
deadline_refused() {
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs: a cpuset of one must leave one out"
	command -v chrt >/dev/null || skip "no chrt"
	! taskset -c 0 chrt -d --sched-runtime 42000 --sched-deadline 1000000 --sched-period 1000000 0 true \
		2>/dev/null || skip "this kernel lets a task pinned to CPU 0 use SCHED_DEADLINE"
}

DEADLINE='{"policy": "SCHED_DEADLINE", "nice": 19, "runtime": 42000, "deadline": 1000000, "period": 1000000}'

@test "process.scheduler refused with a cpuset: runc's 'process scheduler can't be used together with AllowedCPUs', for run and exec" {
	deadline_refused
	local id phrase="process scheduler can't be used together with AllowedCPUs"
	update_config --argjson s "$DEADLINE" '.linux.resources.cpu = {"cpus": "0", "mems": "0"} | .process.scheduler = $s'
	set_args true
	id="$(new_id)"
	run -1 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "process.scheduler: sched_setattr(policy 6" "operation not permitted: $phrase" \
		"linux.resources.cpu.cpus"
	assert_no_container "$id"

	# An exec into a container with a cpuset: the same words.
	update_config 'del(.process.scheduler)'
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	jq -n --argjson s "$DEADLINE" '{args: ["true"], cwd: "/", user: {uid: 0, gid: 0}, scheduler: $s}' \
		>"$TEST_DIR/proc.json"
	run -255 --separate-stderr husk exec --process "$TEST_DIR/proc.json" "$id"
	assert_contains "$stderr" "process.scheduler: sched_setattr(policy 6" "operation not permitted: $phrase"

	# Without a cpuset, EPERM is only EPERM (SCHED_FIFO in a cgroup
	# without a realtime budget is refused, whatever the CPUs).
	update_config 'del(.linux.resources.cpu) | .process.scheduler = {"policy": "SCHED_FIFO", "priority": 10}'
	set_args true
	id="$(new_id)"
	run --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	[[ "$stderr" != *"$phrase"* ]] || fail "runc's words without a cpuset: $stderr"
}

@test "linux.memoryPolicy nodes that do not fit the mode: husk's check with runc's 'mode requires 0 nodes but got 8'" {
	local id
	update_config '.linux.memoryPolicy = {"mode": "MPOL_DEFAULT", "nodes": "0-7"}'
	id="$(new_id)"
	run -1 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" 'invalid configuration: config.json: linux.memoryPolicy.nodes' \
		'must be empty for MPOL_DEFAULT, got "0-7"' "memory policy mode requires 0 nodes but got 8"
	assert_no_container "$id"
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND"}'
	run -1 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "linux.memoryPolicy.nodes" "memory policy mode requires at least one node but got 0"
	assert_no_container "$id"
}

@test "process.capabilities.ambient that cannot be raised: runc's 'can't raise ambient capability CAP_CHOWN: ', colon right after the name" {
	local id
	# runc's own case: CAP_KILL is inheritable and raised, CAP_CHOWN not.
	update_config '.process.capabilities.inheritable = ["CAP_KILL"]
		| .process.capabilities.ambient = ["CAP_KILL", "CAP_CHOWN"]'
	set_args grep CapAmb /proc/self/status
	id="$(new_id)"
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "can't raise ambient capability CAP_CHOWN: operation not permitted"
	[[ "$stderr" != *"ambient capability CAP_KILL"* ]] || fail "CAP_KILL was raisable: $stderr"
	assert_contains "$output" "CapAmb:	0000000000000020"
}

# one_line TEXT [QUOTE]: TEXT has exactly one line naming /badscript,
# with the program (in QUOTEs: \" in a text log) and the errno text.
one_line() {
	local n q="${2:-\"}"
	n="$(grep -c /badscript <<<"$1")"
	[ "$n" -eq 1 ] || fail "want one line naming /badscript, got $n: $1"
	assert_contains "$1" "exec $q/badscript$q: no such file or directory"
}

# error_records LOG: how many error records LOG (text or JSON) has.
error_records() {
	grep -cE '"level":"error"|level=error' "$1" || true
}

@test "an execve that fails is said once: one line for the user, one error record in --log (run, a terminal, create/start, exec, exec -t; exec -d the line only)" {
	local id out
	# The PATH lookup finds the file; execve fails on its interpreter.
	printf '#!/no/such/interpreter\n' >"$BUNDLE/rootfs/badscript"
	chmod +x "$BUNDLE/rootfs/badscript"
	set_args /badscript
	id="$(new_id)"
	run -127 husk run --bundle "$BUNDLE" "$id" </dev/null
	one_line "$output"
	husk delete --force "$id"
	run -127 --separate-stderr husk --log "$TEST_DIR/run.log" run --bundle "$BUNDLE" "$id" </dev/null
	one_line "$stderr"
	[ "$(error_records "$TEST_DIR/run.log")" -eq 1 ] || fail "run.log: $(cat "$TEST_DIR/run.log")"
	one_line "$(cat "$TEST_DIR/run.log")" '\"'
	husk delete --force "$id"

	# A filter that refuses rt_sigprocmask (which guards the record's
	# write against SIGPIPE): the line still, exit 127, no record.
	update_config '.process.noNewPrivileges = true | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["rt_sigprocmask"], action: "SCMP_ACT_ERRNO"}]}'
	run -127 --separate-stderr husk --log "$TEST_DIR/errno.log" run --bundle "$BUNDLE" "$id" </dev/null
	one_line "$stderr"
	[ "$(error_records "$TEST_DIR/errno.log")" -eq 0 ] || fail "errno.log: $(cat "$TEST_DIR/errno.log")"
	husk delete --force "$id"
	update_config 'del(.linux.seccomp)'

	# With a terminal (husk run's own pty): the line comes through it.
	if command -v script >/dev/null; then
		update_config '.process.terminal = true'
		run -127 script -qec "$HUSK_BIN --root $HUSK_ROOT --log $TEST_DIR/tty.log run --bundle $BUNDLE $id" /dev/null </dev/null
		one_line "$output"
		[ "$(error_records "$TEST_DIR/tty.log")" -eq 1 ] || fail "tty.log: $(cat "$TEST_DIR/tty.log")"
		husk delete --force "$id"
		update_config '.process.terminal = false'
	fi

	# create, then start: the line is on the process's stderr, the
	# record in start's --log (start read it from exec.fifo), start is 0.
	create_bg "$id"
	husk --log "$TEST_DIR/start.log" --log-format json start "$id" </dev/null 3>&-
	wait_for_status "$id" stopped
	one_line "$(cat "$TEST_DIR/$id.err")"
	[ "$(error_records "$TEST_DIR/start.log")" -eq 1 ] || fail "start.log: $(cat "$TEST_DIR/start.log")"
	one_line "$(jq -r 'select(.level == "error") | .msg' "$TEST_DIR/start.log")"
	husk delete --force "$id"

	set_args sleep 1000
	run_bg "$id"
	run -127 --separate-stderr husk --log "$TEST_DIR/exec.log" --log-format json exec "$id" /badscript
	one_line "$stderr"
	[ "$(error_records "$TEST_DIR/exec.log")" -eq 1 ] || fail "exec.log: $(cat "$TEST_DIR/exec.log")"
	one_line "$(jq -r 'select(.level == "error") | .msg' "$TEST_DIR/exec.log")"
	run -127 husk exec "$id" /badscript
	one_line "$output"
	# exec -d has left before the execve: the process's line only, as runc.
	run -0 husk exec -d "$id" /badscript
	one_line "$output"
	if command -v script >/dev/null; then
		run -127 script -qec "$HUSK_BIN --root $HUSK_ROOT exec -t $id /badscript" /dev/null </dev/null
		one_line "$output"
	fi
}

# debug_lines_have TEXT PATTERN...: each extended regex matches a line.
debug_lines_have() {
	local text="$1" p
	shift
	for p in "$@"; do
		grep -qE -- "$p" <<<"$text" || fail "no line matching '$p' in: $text"
	done
}

@test "--debug: runc's key lines at the same steps, in text and JSON (nsexec container setup, child process in init(), affinity, seccomp filter flags, closing the pipe, setns_init)" {
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs: the initial affinity must differ from the cgroup's"
	local id text
	update_config '.process.execCPUAffinity = {"initial": "1"}
		| .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", flags: ["SECCOMP_FILTER_FLAG_LOG"],
			syscalls: [{names: ["mkdir"], action: "SCMP_ACT_ERRNO"}]}'
	set_args true
	id="$(new_id)"
	# Text on stderr (no --log), as runc's debug.bats looks.
	run -0 --separate-stderr husk --debug run --bundle "$BUNDLE" "$id" </dev/null
	debug_lines_have "$stderr" 'level=debug msg="init: nsexec: => nsexec container setup' \
		'level=debug msg="init: nsexec: <= nsexec container setup' \
		'level=debug msg="init: launcher: child process in init\(\)' \
		'nsexec.*: affinity: 0x2 \(process.execCPUAffinity.initial' \
		'init: seccomp filter flags: 2' \
		'init: closing the pipe to signal completion'
	husk delete --force "$id"

	# JSON in --log; an exec, with its own initial CPUs.
	update_config 'del(.process.execCPUAffinity)'
	set_args sleep 1000
	run_bg "$id"
	run -0 husk --debug --log "$TEST_DIR/exec.log" --log-format json exec "$id" true
	text="$(jq -r 'select(.level == "debug") | .msg' "$TEST_DIR/exec.log")" || fail "not JSON: $(cat "$TEST_DIR/exec.log")"
	debug_lines_have "$text" '^init: nsexec: => nsexec container setup' '^init: nsexec: <= nsexec container setup' \
		'^init: launcher: child process in init\(\)' '^init: nsexec: affinity: 0x3 \(reset the CPU affinity' \
		'^init: seccomp filter flags: 2' '^init: setns_init: about to exec'
	jq -n '{args: ["true"], cwd: "/", user: {uid: 0, gid: 0}, execCPUAffinity: {initial: "1"}}' >"$TEST_DIR/proc.json"
	run -0 husk --debug --log "$TEST_DIR/exec2.log" --log-format json exec --process "$TEST_DIR/proc.json" "$id"
	debug_lines_have "$(jq -r .msg "$TEST_DIR/exec2.log")" '^init: nsexec: affinity: 0x2 \(process.execCPUAffinity.initial'

	# Without --debug none of them is written (nsexec and the launcher
	# write debug lines, and ask the affinity, only under it).
	run -0 husk --log "$TEST_DIR/quiet.log" exec "$id" true
	! grep -qE 'nsexec container setup|child process in init|affinity: 0x|setns_init' "$TEST_DIR/quiet.log" ||
		fail "debug lines without --debug: $(cat "$TEST_DIR/quiet.log")"
}
