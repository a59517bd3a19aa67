#!/usr/bin/env bats
# husk exec: a new process in a running container, joined to every one of
# its namespaces through nsexec and to its cgroups.

load helpers

# start_sleeper: a running container ($ID, init pid $INIT) to exec into.
start_sleeper() {
	ID="$(new_id)"
	set_args sleep 1000
	run_bg "$ID"
	INIT="$(container_pid "$ID")"
}

# exec_bg ARGS...: a detached exec whose pid ends in $EXEC_PID.
exec_bg() {
	husk exec -d --pid-file "$TEST_DIR/exec.pid" "$ID" "$@" </dev/null >"$TEST_DIR/exec.out" 2>&1 3>&- ||
		fail "exec -d: $(cat "$TEST_DIR/exec.out")"
	EXEC_PID="$(cat "$TEST_DIR/exec.pid")"
	pid_alive "$EXEC_PID" || fail "exec'd pid $EXEC_PID is not running"
}

# same_namespaces PID1 PID2: every /proc/PID/ns link is equal.
same_namespaces() {
	local t
	for t in user mnt uts ipc pid net cgroup time; do
		[ "$(ns_link "$1" "$t")" = "$(ns_link "$2" "$t")" ] ||
			fail "$t ns: $1 has $(ns_link "$1" "$t"), $2 has $(ns_link "$2" "$t")"
	done
}

@test "exec: prints output and returns the exit code" {
	start_sleeper
	run -0 husk exec "$ID" echo hello from exec
	[ "$output" = "hello from exec" ] || fail "output: $output"
	run -7 husk exec "$ID" sh -c 'echo to stderr >&2; exit 7'
	[ "$output" = "to stderr" ] || fail "output: $output"
	# Flags after the id belong to the command.
	run -0 husk exec "$ID" echo -c -e is an argument
	[ "$output" = "-c -e is an argument" ] || fail "output: $output"
	# Killed by SIGTERM: 128 + 15.
	run -143 husk exec "$ID" sh -c 'kill -TERM $$'
}

@test "exec: stdin reaches the process" {
	start_sleeper
	run -0 husk exec "$ID" sh -c 'read line; echo "got $line"' <<<"a line"
	[ "$output" = "got a line" ] || fail "output: $output"
}

@test "exec: the process joins every namespace of the container, a netns joined by path too" {
	local ns ino
	ns="$(new_netns)" || skip "ip netns add failed"
	ino="$(stat -L -c %i "/var/run/netns/$ns")"
	set_ns network "/var/run/netns/$ns"
	set_ns cgroup
	set_ns time
	start_sleeper
	exec_bg sleep 100
	same_namespaces "$INIT" "$EXEC_PID"
	[ "$(ns_link "$EXEC_PID" net)" = "net:[$ino]" ] || fail "netns $(ns_link "$EXEC_PID" net), want net:[$ino]"
	# Inside, /proc is the container's: the process sees the same links.
	run -0 husk exec "$ID" sh -c 'for t in mnt uts ipc pid net cgroup time; do readlink /proc/self/ns/$t; done'
	local t i=0
	for t in mnt uts ipc pid net cgroup time; do
		[ "${lines[$i]}" = "$(ns_link "$INIT" "$t")" ] || fail "$t inside: ${lines[$i]}, init has $(ns_link "$INIT" "$t")"
		i=$((i + 1))
	done
	# In the pid namespace: not pid 1, and it sees the container's init.
	run -0 husk exec "$ID" sh -c 'echo $$; cat /proc/1/cmdline | tr "\0" " "'
	[ "${lines[0]}" -gt 1 ] || fail "pid inside: ${lines[0]}"
	[ "${lines[1]}" = "sleep 1000 " ] || fail "pid 1 inside: ${lines[1]}"
}

@test "exec: in a container with a user namespace, it is root inside and the mapped uid outside" {
	requires_userns
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	start_sleeper
	exec_bg sleep 100
	same_namespaces "$INIT" "$EXEC_PID"
	grep -qP '^Uid:\t100000\t100000\t100000\t100000$' "/proc/$EXEC_PID/status" ||
		fail "host view: $(grep -E '^(Uid|Gid):' "/proc/$EXEC_PID/status")"
	run -0 husk exec "$ID" id
	[[ "$output" == "uid=0(root) gid=0(root)"* ]] || fail "id: $output"
}

@test "exec: the process is in the container's cgroups" {
	start_sleeper
	exec_bg sleep 100
	[ "$(cat "/proc/$EXEC_PID/cgroup")" = "$(cat "/proc/$INIT/cgroup")" ] ||
		fail "exec'd: $(cat "/proc/$EXEC_PID/cgroup"); init: $(cat "/proc/$INIT/cgroup")"
	grep -q "$ID" "/proc/$EXEC_PID/cgroup" || fail "not in a cgroup of $ID: $(cat "/proc/$EXEC_PID/cgroup")"
}

@test "exec: capability sets, no_new_privs and seccomp are the container's" {
	update_config '.process.capabilities = {
		"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_RAW"],
		"effective": ["CAP_CHOWN", "CAP_KILL"],
		"permitted": ["CAP_CHOWN", "CAP_KILL"],
		"inheritable": [], "ambient": []}
		| .process.noNewPrivileges = true
		| .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
			"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	start_sleeper
	exec_bg sleep 100
	local f
	for f in CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp; do
		[ "$(grep "^$f:" "/proc/$EXEC_PID/status")" = "$(grep "^$f:" "/proc/$INIT/status")" ] ||
			fail "$f: exec'd $(grep "^$f:" "/proc/$EXEC_PID/status"), init $(grep "^$f:" "/proc/$INIT/status")"
	done
	grep -qP '^CapEff:\t0000000000000021$' "/proc/$EXEC_PID/status" || fail "$(grep CapEff "/proc/$EXEC_PID/status")"
	grep -qP '^CapBnd:\t0000000000002021$' "/proc/$EXEC_PID/status" || fail "$(grep CapBnd "/proc/$EXEC_PID/status")"
	run husk exec "$ID" mkdir /tmp/x
	[ "$status" -ne 0 ] && [[ "$output" == *"Operation not permitted"* ]] || fail "mkdir under the filter: $status $output"
	# --cap adds one the bounding set has.
	run -0 husk exec --cap CAP_NET_RAW "$ID" grep CapEff /proc/self/status
	[[ "$output" == *"0000000000002021" ]] || fail "with --cap CAP_NET_RAW: $output"
}

@test "exec: --cap outside init's bounding set is granted, as runc (docker exec --privileged)" {
	update_config '.process.capabilities = {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}'
	start_sleeper
	# CAP_SYS_ADMIN is bit 21: 0x200000, with CAP_KILL's 0x20.
	run -0 husk exec --cap CAP_SYS_ADMIN "$ID" grep -E "^Cap(Eff|Bnd)" /proc/self/status
	assert_contains "$output" "CapEff:	0000000000200020" "CapBnd:	0000000000200020"
	# An unknown name is ignored with runc's warning.
	run -0 --separate-stderr husk exec --cap CAP_NOPE "$ID" true
	assert_contains "$stderr" "ignoring unknown or unavailable capabilities: [CAP_NOPE]"
}

@test "exec: a --process whose capabilities are outside init's bounding set gets them, as runc" {
	update_config '.process.capabilities = {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}'
	start_sleeper
	echo '{"args": ["grep", "CapEff", "/proc/self/status"], "cwd": "/",
		"capabilities": {"bounding": ["CAP_SYS_ADMIN", "CAP_NET_ADMIN"], "effective": ["CAP_SYS_ADMIN", "CAP_NET_ADMIN"],
		"permitted": ["CAP_SYS_ADMIN", "CAP_NET_ADMIN"]}}' >"$TEST_DIR/p.json"
	# CAP_NET_ADMIN 12 (0x1000), CAP_SYS_ADMIN 21 (0x200000).
	run -0 husk exec --process "$TEST_DIR/p.json" "$ID"
	[ "$output" = "CapEff:	0000000000201000" ] || fail "caps: $output"
}

@test "exec: exit status 255 when exec fails before the process runs, as runc" {
	start_sleeper
	run -255 husk exec "$ID" /no/such/binary
	assert_contains "$output" "/no/such/binary"
	run -255 husk exec "husk-no-such-container-$$" true
	assert_contains "$output" "does not exist"
	# The process's own status is passed on.
	run -3 husk exec "$ID" sh -c 'exit 3'
}

@test "exec: --env, --cwd, --user and --additional-gids shape the process" {
	start_sleeper
	run -0 husk exec -e FOO=bar --env BAZ=qux --cwd /tmp -u 1000:1000 -g 10 -g 20 "$ID" \
		sh -c 'echo "$FOO $BAZ"; pwd; id -u; id -g; id -G; echo "$HOME"'
	[ "${lines[0]}" = "bar qux" ] || fail "env: $output"
	[ "${lines[1]}" = /tmp ] || fail "cwd: $output"
	[ "${lines[2]}" = 1000 ] && [ "${lines[3]}" = 1000 ] || fail "user: $output"
	[ "${lines[4]}" = "1000 10 20" ] || fail "groups: $output"
	[ "${lines[5]}" = /home/user ] || fail "HOME: $output"
	run -255 husk exec -u bob "$ID" true
	assert_contains "$output" '--user "bob"' "number"
	run -255 husk exec --cwd relative "$ID" true
	assert_contains "$output" '--cwd "relative"' "absolute"
	run -255 husk exec -e NOEQUALS "$ID" true
	assert_contains "$output" '--env "NOEQUALS"'
}

@test "exec: --process reads args, env, cwd, user and capabilities from a runtime-spec JSON" {
	start_sleeper
	cat >"$TEST_DIR/process.json" <<-'EOF'
		{
		  "args": ["sh", "-c", "echo $GREETING; pwd; id -u; id -g; grep CapEff /proc/self/status"],
		  "env": ["PATH=/bin:/usr/bin", "GREETING=hi from process.json"],
		  "cwd": "/home/user",
		  "user": {"uid": 1000, "gid": 1000},
		  "capabilities": {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"],
		                   "inheritable": ["CAP_KILL"], "ambient": ["CAP_KILL"]}
		}
	EOF
	run -0 husk exec --process "$TEST_DIR/process.json" "$ID"
	[ "${lines[0]}" = "hi from process.json" ] || fail "env: $output"
	[ "${lines[1]}" = /home/user ] || fail "cwd: $output"
	[ "${lines[2]}" = 1000 ] && [ "${lines[3]}" = 1000 ] || fail "user: $output"
	[[ "${lines[4]}" == *"0000000000000020" ]] || fail "caps (ambient CAP_KILL as uid 1000): $output"
}

@test "exec: a bad --process JSON names the field, and nothing is left" {
	start_sleeper
	echo '{"args": "true", "cwd": "/"}' >"$TEST_DIR/p1.json"
	run -255 husk exec --process "$TEST_DIR/p1.json" "$ID"
	assert_contains "$output" "p1.json" "args" "line 1"
	echo '{"args": [], "cwd": "/"}' >"$TEST_DIR/p2.json"
	run -255 husk exec --process "$TEST_DIR/p2.json" "$ID"
	assert_contains "$output" "process.args: must not be empty"
	echo '{"args": ["true"], "cwd": "relative"}' >"$TEST_DIR/p3.json"
	run -255 husk exec --process "$TEST_DIR/p3.json" "$ID"
	assert_contains "$output" 'process.cwd: must be absolute, got "relative"'
	# An unknown capability is ignored with runc's warning.
	echo '{"args": ["true"], "cwd": "/", "capabilities": {"bounding": ["CAP_BOGUS"]}}' >"$TEST_DIR/p4.json"
	run -0 husk exec --process "$TEST_DIR/p4.json" "$ID"
	assert_contains "$output" 'ignoring unknown or unavailable capabilities: [CAP_BOGUS]'
	run -255 husk exec --process "$TEST_DIR/missing.json" "$ID"
	assert_contains "$output" "--process" "missing.json" "no such file"
	# Only the container's init is left in it.
	run -0 husk ps "$ID"
	[ "${#lines[@]}" -eq 2 ] || fail "processes left: $output"
}

@test "exec: a missing binary says so, and nothing is left" {
	start_sleeper
	run -255 husk exec "$ID" no-such-binary
	assert_contains "$output" 'exec: "no-such-binary": executable file not found in $PATH'
	run -255 husk exec "$ID" /bin/no/such
	assert_contains "$output" '"/bin/no/such"'
	run -0 husk ps "$ID"
	[ "${#lines[@]}" -eq 2 ] || fail "processes left: $output"
}

@test "exec: errors for a missing, stopped or paused container; --ignore-paused waits for resume" {
	run -255 husk exec nosuchcontainer true
	assert_contains "$output" "container nosuchcontainer does not exist"
	start_sleeper
	run -255 husk exec "$ID"
	assert_contains "$output" "give a command"

	run -0 husk pause "$ID"
	run -255 husk exec "$ID" true
	assert_contains "$output" "paused" "--ignore-paused"
	# The process joins the frozen cgroup and runs once the container resumes.
	husk exec --ignore-paused "$ID" sh -c 'echo ran after resume' >"$TEST_DIR/paused.out" 2>&1 3>&- &
	local bg=$!
	track_bg "$bg"
	sleep 0.5
	[ ! -s "$TEST_DIR/paused.out" ] || fail "ran while paused: $(cat "$TEST_DIR/paused.out")"
	run -0 husk resume "$ID"
	wait "$bg" || fail "exec --ignore-paused: $(cat "$TEST_DIR/paused.out")"
	[ "$(cat "$TEST_DIR/paused.out")" = "ran after resume" ] || fail "$(cat "$TEST_DIR/paused.out")"

	run -0 husk kill "$ID" KILL
	wait_for_status "$ID" stopped
	run -255 husk exec "$ID" true
	assert_contains "$output" "cannot exec in a stopped container"
}

@test "exec: --detach writes the pid-file atomically and returns while the process runs" {
	start_sleeper
	mkdir "$TEST_DIR/pids"
	husk exec -d --pid-file "$TEST_DIR/pids/exec.pid" "$ID" sleep 100 </dev/null >/dev/null 2>&1 3>&- ||
		fail "exec -d failed"
	[ "$(ls "$TEST_DIR/pids")" = exec.pid ] || fail "pid-file dir holds: $(ls "$TEST_DIR/pids")"
	local pid
	pid="$(cat "$TEST_DIR/pids/exec.pid")"
	pid_alive "$pid" || fail "pid $pid not running"
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 100 " ] || fail "pid $pid is $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	# A foreground exec writes the pid-file too.
	run -0 husk exec --pid-file "$TEST_DIR/pids/fg.pid" "$ID" sh -c 'echo $$'
	[ -s "$TEST_DIR/pids/fg.pid" ] || fail "no pid-file for a foreground exec"
}

@test "exec: 20 concurrent execs into one container all succeed" {
	start_sleeper
	local i pids=()
	for i in $(seq 20); do
		husk exec "$ID" sh -c "echo exec-$i" >"$TEST_DIR/c$i.out" 2>&1 3>&- &
		pids+=($!)
	done
	for i in $(seq 20); do
		wait "${pids[$((i - 1))]}" || fail "exec $i failed: $(cat "$TEST_DIR/c$i.out")"
		[ "$(cat "$TEST_DIR/c$i.out")" = "exec-$i" ] || fail "exec $i printed: $(cat "$TEST_DIR/c$i.out")"
	done
}

# exec_trap SIG CODE: a foreground husk exec, in the test's background,
# whose shell prints "got SIG" and exits CODE on SIG. Returns once the
# shell runs, with EXEC_BG (the job) and EXEC_HUSK (the husk process) set.
exec_trap() {
	local i
	update_config '.root.readonly = false'
	start_sleeper
	rm -f "$BUNDLE/rootfs/tmp/ready"
	husk exec "$ID" sh -c "trap 'echo got $1; exit $2' $1; touch /tmp/ready; while :; do sleep 0.05; done" \
		>"$TEST_DIR/sig.out" 2>&1 3>&- &
	EXEC_BG=$!
	track_bg "$EXEC_BG"
	for ((i = 0; i < 100; i++)); do [ -e "$BUNDLE/rootfs/tmp/ready" ] && break; sleep 0.05; done
	[ -e "$BUNDLE/rootfs/tmp/ready" ] || fail "the exec'd shell never started: $(cat "$TEST_DIR/sig.out")"
	# `husk` is a function running timeout(1): signal husk itself.
	EXEC_HUSK="$(pgrep -f -- "^$HUSK_BIN --root $HUSK_ROOT exec $ID")"
	[ -n "$EXEC_HUSK" ] || fail "no husk exec process found"
}

# exec_trapped SIG CODE: the exec_trap job ended with CODE, its shell's
# trap for SIG having run.
exec_trapped() {
	local code=0
	wait "$EXEC_BG" || code=$?
	[ "$code" -eq "$2" ] || fail "exit code $code, want $2: $(cat "$TEST_DIR/sig.out")"
	[ "$(cat "$TEST_DIR/sig.out")" = "got $1" ] || fail "output: $(cat "$TEST_DIR/sig.out")"
}

@test "exec: signals to a foreground exec reach the process" {
	exec_trap TERM 9
	kill -TERM "$EXEC_HUSK"
	exec_trapped TERM 9
}

@test "exec: a foreground exec forwards SIGUSR1 to the process once it has run a moment" {
	local i
	exec_trap USR1 5
	# Caught once the process has run 10 ms (libcontainer/launch/waiter.go).
	for ((i = 0; i < 100; i++)); do
		kill -USR1 "$EXEC_HUSK" 2>/dev/null || break
		sleep 0.05
	done
	# Still running after 5 s of USR1s: end it, and exec_trapped fails.
	# (husk may have exited between the two checks: that is no error.)
	kill -TERM "$EXEC_HUSK" 2>/dev/null || true
	exec_trapped USR1 5
}

@test "exec: kill --all reaches exec'd processes; delete --force removes a container with execs running" {
	start_sleeper
	exec_bg sleep 100
	local first="$EXEC_PID"
	run -0 husk kill --all "$ID" KILL
	assert_pid_gone "$first"
	assert_pid_gone "$INIT"
	run -0 husk delete "$ID"

	start_sleeper
	exec_bg sleep 100
	run -0 husk delete --force "$ID"
	assert_pid_gone "$EXEC_PID"
	assert_no_container "$ID"
}

@test "exec: --tty in the foreground gives the process a pty" {
	start_sleeper
	run -0 husk exec -t "$ID" sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo stdio-is-tty'
	local out="${output//$'\r'/}"
	[[ "$out" == /dev/pts/*$'\n'stdio-is-tty ]] || fail "output: $out"
}

@test "exec: --tty with --console-socket sends the pty to the socket" {
	start_sleeper
	SOCK="$TEST_DIR/console.sock"
	start_recvtty -no-stdin
	run -0 husk exec -d -t --console-socket "$SOCK" "$ID" sh -c 'echo through the exec pty; tty'
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$RECVTTY_PID" 2>/dev/null || break
		sleep 0.05
	done
	local out
	out="$(tr -d '\r' <"$TEST_DIR/tty.out")"
	[[ "$out" == "through the exec pty"$'\n'/dev/pts/* ]] || fail "recvtty got: $out"
	run -255 husk exec --console-socket "$SOCK" "$ID" true
	assert_contains "$output" "--console-socket" "no terminal"
}

@test "exec and run: --preserve-fds and LISTEN_FDS pass fds 3, 4, … to the process" {
	start_sleeper
	echo first >"$TEST_DIR/f1"
	echo second >"$TEST_DIR/f2"
	run -0 husk exec --preserve-fds 2 "$ID" sh -c 'cat <&3; cat <&4; ls /proc/self/fd' 3<"$TEST_DIR/f1" 4<"$TEST_DIR/f2"
	[ "${lines[0]}" = first ] && [ "${lines[1]}" = second ] || fail "output: $output"
	run -255 husk exec --preserve-fds 2 "$ID" true 3<&- 4<&-
	assert_contains "$output" "--preserve-fds 2: fd 3 is not open"

	# Socket activation: LISTEN_PID is husk's own pid, so exec husk from sh.
	run -0 sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --root "$1" exec "$2" sh -c "echo \$LISTEN_FDS \$LISTEN_PID; cat <&3"' \
		"$HUSK_BIN" "$HUSK_ROOT" "$ID" 3<"$TEST_DIR/f1"
	[ "${lines[0]}" = "1 1" ] && [ "${lines[1]}" = first ] || fail "output: $output"

	local id
	id="$(new_id)"
	set_args sh -c 'cat <&3; cat <&4'
	run -0 husk run --preserve-fds 2 --bundle "$BUNDLE" "$id" 3<"$TEST_DIR/f1" 4<"$TEST_DIR/f2"
	[ "$output" = "first"$'\n'"second" ] || fail "run: $output"
}

# start_recvpidfd: tests/cmd/recvpidfd on $TEST_DIR/pidfd.sock, printing
# to TEST_DIR/pidfd.out; wait_recvpidfd waits for it to exit.
start_recvpidfd() {
	local tool
	tool="$(build_tool recvpidfd)" || fail "cannot build recvpidfd"
	PIDFD_SOCK="$TEST_DIR/pidfd.sock"
	"$tool" "$PIDFD_SOCK" >"$TEST_DIR/pidfd.out" 2>&1 3>&- &
	RECV_PID=$!
	track_bg "$RECV_PID"
	for _ in $(seq 100); do [ -S "$PIDFD_SOCK" ] && return 0; sleep 0.05; done
	fail "recvpidfd did not listen: $(cat "$TEST_DIR/pidfd.out")"
}

wait_recvpidfd() {
	for _ in $(seq 100); do kill -0 "$RECV_PID" 2>/dev/null || return 0; sleep 0.05; done
	fail "recvpidfd still waits: $(cat "$TEST_DIR/pidfd.out")"
}

@test "exec: --pidfd-socket on create receives a pidfd of the container's init" {
	start_recvpidfd
	ID="$(new_id)"
	set_args sleep 1000
	create_bg "$ID" --pidfd-socket "$PIDFD_SOCK"
	wait_recvpidfd
	[ "$(cat "$TEST_DIR/pidfd.out")" = "pidfd $(container_pid "$ID")" ] || fail "got: $(cat "$TEST_DIR/pidfd.out")"
}

@test "exec: --pidfd-socket on run -d receives a pidfd of the container's init" {
	start_recvpidfd
	ID="$(new_id)"
	set_args sleep 1000
	husk run -d --pidfd-socket "$PIDFD_SOCK" --bundle "$BUNDLE" "$ID" </dev/null >/dev/null 2>&1 3>&- || fail "run -d failed"
	wait_recvpidfd
	[ "$(cat "$TEST_DIR/pidfd.out")" = "pidfd $(container_pid "$ID")" ] || fail "got: $(cat "$TEST_DIR/pidfd.out")"
}

@test "exec: --pidfd-socket on exec receives a pidfd of the exec'd process" {
	start_sleeper
	start_recvpidfd
	husk exec -d --pid-file "$TEST_DIR/exec.pid" --pidfd-socket "$PIDFD_SOCK" "$ID" sleep 1000 </dev/null >/dev/null 2>&1 3>&- ||
		fail "exec -d failed"
	wait_recvpidfd
	[ "$(cat "$TEST_DIR/pidfd.out")" = "pidfd $(cat "$TEST_DIR/exec.pid")" ] || fail "got: $(cat "$TEST_DIR/pidfd.out")"
	# A socket nobody listens on fails the exec, with nothing run.
	run -255 husk exec --pidfd-socket "$TEST_DIR/nobody.sock" "$ID" true
	assert_contains "$output" "--pidfd-socket" "nobody.sock"
}

@test "exec: run --keep leaves the stopped container for state and delete" {
	local id
	id="$(new_id)"
	set_args sh -c 'exit 7'
	run -7 husk run --keep --bundle "$BUNDLE" "$id" </dev/null
	[ "$(container_status "$id")" = stopped ] || fail "status: $(container_status "$id")"
	run -0 husk delete "$id"
	assert_no_container "$id"
}

# cgroup_dir CTRL PID: the directory of PID's cgroup v1 controller CTRL.
cgroup_dir() {
	local rel
	rel="$(awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$2/cgroup")"
	echo "/sys/fs/cgroup/$1$rel"
}

# all_cgroup_dirs PID: every cgroup directory of PID (v1 controllers and
# the unified one), one per line.
all_cgroup_dirs() {
	local id ctrls rel c
	while IFS=: read -r id ctrls rel; do
		if [ -z "$ctrls" ]; then
			echo "/sys/fs/cgroup/unified$rel"
		else
			c="${ctrls#name=}"
			echo "/sys/fs/cgroup/$c$rel"
		fi
	done <"/proc/$1/cgroup" | while read -r d; do [ -d "$d" ] && echo "$d"; done | sort -u
}

@test "exec: --cgroup SUB puts the process in a sub-cgroup of every controller" {
	[ -d /sys/fs/cgroup/pids ] && [ -d /sys/fs/cgroup/memory ] || skip "needs cgroup v1 pids and memory"
	start_sleeper
	local pids mem d
	pids="$(cgroup_dir pids "$INIT")"
	mem="$(cgroup_dir memory "$INIT")"
	# As in runc, the sub-cgroup must exist in each of them.
	for d in $(all_cgroup_dirs "$INIT"); do
		mkdir "$d/sub"
		# A v1 cpuset starts empty: give it the container's.
		if [ -e "$d/cpuset.cpus" ]; then
			cat "$d/cpuset.cpus" >"$d/sub/cpuset.cpus"
			cat "$d/cpuset.mems" >"$d/sub/cpuset.mems"
		fi
	done
	exec_bg_cgroup --cgroup sub
	[ "$(cgroup_dir pids "$EXEC_PID")" = "$pids/sub" ] || fail "pids: $(cgroup_dir pids "$EXEC_PID")"
	[ "$(cgroup_dir memory "$EXEC_PID")" = "$mem/sub" ] || fail "memory: $(cgroup_dir memory "$EXEC_PID")"
	kill -9 "$EXEC_PID"
	assert_pid_gone "$EXEC_PID"
	for d in $(all_cgroup_dirs "$INIT"); do rmdir "$d/sub" 2>/dev/null || true; done
}

@test "exec: --cgroup CTRL:SUB moves only that controller; a missing sub-cgroup fails" {
	[ -d /sys/fs/cgroup/pids ] && [ -d /sys/fs/cgroup/memory ] || skip "needs cgroup v1 pids and memory"
	start_sleeper
	local pids mem
	pids="$(cgroup_dir pids "$INIT")"
	mem="$(cgroup_dir memory "$INIT")"
	mkdir "$pids/only"
	exec_bg_cgroup --cgroup pids:only
	[ "$(cgroup_dir pids "$EXEC_PID")" = "$pids/only" ] || fail "pids: $(cgroup_dir pids "$EXEC_PID")"
	[ "$(cgroup_dir memory "$EXEC_PID")" = "$mem" ] || fail "memory: $(cgroup_dir memory "$EXEC_PID")"
	kill -9 "$EXEC_PID"
	assert_pid_gone "$EXEC_PID"
	rmdir "$pids/only"
	run -255 husk exec --cgroup nosuch "$ID" true
	assert_contains "$output" "--cgroup nosuch" "no such file or directory"
}

@test "exec: --cgroup that leads out of the container's cgroup is refused with runc's 'bad sub cgroup path'" {
	start_sleeper
	local bad
	for bad in ../escape pids:../../escape a/../../escape; do
		run -255 --separate-stderr husk exec --cgroup "$bad" "$ID" true
		assert_contains "$stderr" "bad sub cgroup path" "--cgroup \"$bad\""
	done
	# Nothing was made or moved: the container has its one process.
	run -0 husk ps --format json "$ID"
	[ "$output" = "[$INIT]" ] || fail "ps: $output"
}

# exec_bg_cgroup FLAGS...: a detached `sleep 1000` exec with FLAGS.
exec_bg_cgroup() {
	husk exec -d --pid-file "$TEST_DIR/exec.pid" "$@" "$ID" sleep 1000 </dev/null >"$TEST_DIR/exec.out" 2>&1 3>&- ||
		fail "exec -d $*: $(cat "$TEST_DIR/exec.out")"
	EXEC_PID="$(cat "$TEST_DIR/exec.pid")"
}

# exec_log ARGS...: husk --debug exec, the log in $TEST_DIR/exec.log.
exec_log() {
	rm -f "$TEST_DIR/exec.log"
	run --separate-stderr husk --debug --log "$TEST_DIR/exec.log" --log-format text exec "$@"
}

@test "exec: the launcher sets the process up before it forks it into the container, without the Go runtime" {
	start_sleeper
	exec_log "$ID" true
	[ "$status" -eq 0 ] || fail "exec: $stderr"
	grep -q 'setns_init: about to exec \\"/bin/true\\"' "$TEST_DIR/exec.log" || fail "no launcher: $(cat "$TEST_DIR/exec.log")"
}

@test "exec: the launcher's errors: missing binary, directory, bad cwd, in one line, exit 255 as runc" {
	start_sleeper
	local args want
	for args in "$ID no-such-binary|executable file not found in \$PATH" "$ID /bin/no/such|stat /bin/no/such: no such file or directory" \
		"$ID /etc|is a directory" "--cwd /nope $ID true|process.cwd: chdir \"/nope\": no such file or directory"; do
		want="${args#*|}"
		# shellcheck disable=SC2086
		exec_log ${args%|*}
		[ "$status" -eq 255 ] || fail "${args%|*}: status $status"
		assert_contains "$stderr" "$want"
		[ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "not one line: $stderr"
	done
}

@test "exec: scheduler, ioPriority, execCPUAffinity and personality reach an exec'd process" {
	update_config '.linux.personality = {"domain": "LINUX32"}'
	start_sleeper
	jq '.process | .args = ["sh", "-c", "uname -m; grep Cpus_allowed_list /proc/self/status; grep ^policy /proc/self/sched; ionice"]
		| .ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 3}
		| .scheduler = {"policy": "SCHED_BATCH", "nice": 5}
		| .execCPUAffinity = {"final": "0"}' "$BUNDLE/config.json" >"$TEST_DIR/p.json"
	exec_log --process "$TEST_DIR/p.json" "$ID"
	[ "$status" -eq 0 ] || fail "exec: $stderr"
	assert_contains "$output" "i686" "Cpus_allowed_list:	0" "best-effort: prio 3"
	[[ "$output" =~ policy[[:space:]]+:[[:space:]]+3 ]] || fail "not SCHED_BATCH (3): $output"
}

@test "exec: into a container whose pids.max leaves a few pids, with a forker racing: works or fails in one line naming pids.max" {
	[ -d /sys/fs/cgroup/pids ] || [ -e /sys/fs/cgroup/pids.max ] || skip "no pids cgroup controller"
	update_config '.linux.resources.pids = {"limit": 12}'
	start_sleeper
	# Forkers keep the container at its limit: each fills it with sleepers
	# until a fork fails (EAGAIN ends the shell), the sleepers end and free
	# pids that the next forker, or an exec, races for.
	(
		while [ ! -e "$TEST_DIR/stop" ]; do
			husk exec -d "$ID" sh -c 'while :; do sleep 0.05 & done' </dev/null >/dev/null 2>&1 3>&- || true
			sleep 0.02
		done
	) &
	local forker=$! i ok=0
	for i in $(seq 1 24); do
		run --separate-stderr husk exec "$ID" true
		if [ "$status" -eq 0 ]; then
			ok=$((ok + 1))
			continue
		fi
		[ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "not one line: $stderr"
		assert_contains "$stderr" pids.max
		[[ "$stderr" != *goroutine* && "$stderr" != *pthread_create* ]] || fail "a Go crash: $stderr"
	done
	touch "$TEST_DIR/stop"
	wait "$forker"
	echo "# $ok of 24 execs ran; the others failed in one line naming pids.max" >&3
}
