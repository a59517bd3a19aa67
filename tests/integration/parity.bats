#!/usr/bin/env bats
# One launcher (docs/architecture.md): a container's init and every exec
# are set up by the same code. One table of process configs; each runs as
# a container's process (run) and is exec'd into a running container in
# four ways (tty or not, detached or not); what the process sees must be
# the same in all five.

load helpers

# PROBE prints what a process sees of its setup.
PROBE='grep -E "^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_filters|Cpus_allowed_list):" /proc/self/status
echo "umask $(umask)"; echo "cwd $(pwd)"; env | sort; cat /proc/self/limits'

# wait_gone PID: until PID has exited.
wait_gone() {
	local i
	for ((i = 0; i < 400; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	fail "pid $1 still runs"
}

# same NAME FILE: FILE (\r dropped) is the run's output, $TEST_DIR/run.out.
same() {
	tr -d '\r' <"$2" >"$2.clean"
	diff -u "$TEST_DIR/run.out" "$2.clean" >"$TEST_DIR/diff" ||
		fail "$1 differs from run:
$(cat "$TEST_DIR/diff")"
}

# parity EDIT: the config edited by the jq EDIT (process fields, linux),
# the probe as its process: run in the foreground, then exec'd into a
# running container with the same config, in the foreground and detached,
# with and without a terminal.
parity() {
	update_config "$1"
	update_config --arg p "$PROBE" '.process.args = ["sh", "-c", $p]'
	local id p t
	id="$(new_id)"
	husk run --bundle "$BUNDLE" "$id" </dev/null >"$TEST_DIR/run.raw" 2>"$TEST_DIR/run.err" 3>&- ||
		fail "run: $(cat "$TEST_DIR/run.raw" "$TEST_DIR/run.err")"
	tr -d '\r' <"$TEST_DIR/run.raw" >"$TEST_DIR/run.out"
	grep -q "^Uid:" "$TEST_DIR/run.out" || fail "the probe did not run: $(cat "$TEST_DIR/run.out")"

	for t in false true; do
		jq --argjson t "$t" '.process | .terminal = $t' "$BUNDLE/config.json" >"$TEST_DIR/p-$t.json"
	done
	update_config '.process.args = ["sleep", "1000"] | .process.terminal = false'
	ID="$(new_id)"
	run_bg "$ID"

	# The probe writes to stdout; husk's own warnings go to stderr.
	husk exec --process "$TEST_DIR/p-false.json" "$ID" </dev/null >"$TEST_DIR/fg.out" 2>"$TEST_DIR/fg.err" 3>&- ||
		fail "exec: $(cat "$TEST_DIR/fg.out" "$TEST_DIR/fg.err")"
	same "exec" "$TEST_DIR/fg.out"

	husk exec -d --pid-file "$TEST_DIR/d.pid" --process "$TEST_DIR/p-false.json" "$ID" \
		</dev/null >"$TEST_DIR/d.out" 2>"$TEST_DIR/d.err" 3>&- || fail "exec -d: $(cat "$TEST_DIR/d.out" "$TEST_DIR/d.err")"
	wait_gone "$(cat "$TEST_DIR/d.pid")"
	same "exec -d" "$TEST_DIR/d.out"

	husk exec -t --process "$TEST_DIR/p-true.json" "$ID" </dev/null >"$TEST_DIR/t.out" 2>"$TEST_DIR/t.err" 3>&- ||
		fail "exec -t: $(cat "$TEST_DIR/t.out" "$TEST_DIR/t.err")"
	same "exec -t" "$TEST_DIR/t.out"

	SOCK="$TEST_DIR/console.sock"
	start_recvtty -no-stdin
	husk exec -d -t --console-socket "$SOCK" --process "$TEST_DIR/p-true.json" "$ID" \
		</dev/null >"$TEST_DIR/dt.err" 2>&1 3>&- || fail "exec -d -t: $(cat "$TEST_DIR/dt.err")"
	wait_gone "$RECVTTY_PID"
	same "exec -d -t" "$TEST_DIR/tty.out"
}

@test "parity: the bundle's own process" {
	parity '.'
}

@test "parity: user, groups, umask, cwd, env with a repeated key, an empty HOME and a PATH lookup" {
	parity '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [5, 7], "umask": 23}
		| .process.cwd = "/tmp" | .process.env = ["PATH=/nope:/bin", "A=1", "B=x", "A=2", "HOME="]'
}

@test "parity: capability sets with ambient, noNewPrivileges, a seccomp filter" {
	parity '.process.capabilities = {
		"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_RAW"],
		"effective": ["CAP_CHOWN", "CAP_KILL"], "permitted": ["CAP_CHOWN", "CAP_KILL"],
		"inheritable": ["CAP_KILL"], "ambient": ["CAP_KILL", "CAP_CHOWN"]}
		| .process.noNewPrivileges = true
		| .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
			"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	assert_contains "$(cat "$TEST_DIR/run.out")" "CapAmb:	0000000000000020" "NoNewPrivs:	1" "Seccomp:	2"
}

@test "parity: rlimits and execCPUAffinity for a user without root, a filter without noNewPrivileges" {
	parity '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 321, "hard": 654}, {"type": "RLIMIT_CORE", "soft": 0, "hard": 0}]
		| .process.execCPUAffinity = {"final": "0"} | .process.user = {"uid": 1000, "gid": 1000}
		| .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"}]}'
	assert_contains "$(cat "$TEST_DIR/run.out")" "Cpus_allowed_list:	0" "Max open files            321                  654"
}

@test "parity: a process with a terminal" {
	parity '.process.terminal = true | .process.env += ["TERM=xterm"]'
}
