#!/usr/bin/env bats
# linux.seccomp: actions, errnoRet, arguments, architectures, flags, the
# notify listener, and clear errors for bad profiles.

load helpers

# set_seccomp JSON: the container's linux.seccomp.
set_seccomp() {
	update_config --argjson s "$1" '.linux.seccomp = $s'
}

# deny_mkdir [ACTION [ERRNORET]]: allow everything but mkdir.
deny_mkdir() {
	local action="${1:-SCMP_ACT_ERRNO}" rule
	rule="$(jq -n --arg a "$action" '{names: ["mkdir"], action: $a}')"
	[ -z "${2:-}" ] || rule="$(jq --argjson e "$2" '.errnoRet = $e' <<<"$rule")"
	set_seccomp "$(jq -n --argjson r "$rule" '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [$r]}')"
}

@test "seccomp: denying mkdir with EPERM fails mkdir, the rest works" {
	local id
	id="$(new_id)"
	deny_mkdir SCMP_ACT_ERRNO
	set_args sh -c 'mkdir /dev/shm/d; echo "mkdir=$?"; touch /dev/shm/f && ls /dev/shm; echo done'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "Operation not permitted" "mkdir=1" "f" "done"
	[ ! -e "$BUNDLE/rootfs/dev/shm/d" ]
}

@test "seccomp: errnoRet chooses the errno" {
	local id
	id="$(new_id)"
	deny_mkdir SCMP_ACT_ERRNO 28 # ENOSPC
	set_args sh -c 'mkdir /dev/shm/d'
	run -1 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "No space left on device"
}

@test "seccomp: without noNewPrivileges the filter is loaded while init is privileged" {
	local id
	id="$(new_id)"
	update_config '.process.noNewPrivileges = false | .process.user = {uid: 1000, gid: 1000}'
	deny_mkdir SCMP_ACT_ERRNO
	set_args sh -c 'mkdir /dev/shm/d; echo "mkdir=$? uid=$(id -u)"; grep NoNewPrivs /proc/self/status'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "Operation not permitted" "mkdir=1 uid=1000" "NoNewPrivs:	0"
}

@test "seccomp: SCMP_ACT_KILL, KILL_PROCESS and TRAP end mkdir with SIGSYS" {
	local id action
	for action in SCMP_ACT_KILL SCMP_ACT_KILL_PROCESS SCMP_ACT_KILL_THREAD SCMP_ACT_TRAP; do
		id="$(new_id)"
		deny_mkdir "$action"
		set_args sh -c 'mkdir /dev/shm/d; echo "status=$?"'
		run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
		# 159 = 128 + SIGSYS
		assert_contains "$output" "status=159"
	done
}

@test "seccomp: SCMP_ACT_LOG lets the syscall through" {
	local id
	id="$(new_id)"
	deny_mkdir SCMP_ACT_LOG
	set_args sh -c 'mkdir /dev/shm/d && echo made'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "made"
}

@test "seccomp: SCMP_ACT_TRACE with no tracer fails the syscall with ENOSYS" {
	local id
	id="$(new_id)"
	deny_mkdir SCMP_ACT_TRACE 5
	set_args sh -c 'mkdir /dev/shm/d; echo "mkdir=$?"'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "Function not implemented" "mkdir=1"
}

@test "seccomp: argument conditions choose which calls match" {
	local id
	id="$(new_id)"
	# kill(pid, SIGUSR1) is refused (arg 1 is the signal), other signals not.
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"args": [{"index": 1, "value": 10, "op": "SCMP_CMP_EQ"}]}]}'
	set_args sh -c 'sleep 100 & p=$!; kill -USR1 $p || echo usr1-refused; kill -TERM $p && echo term-sent'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "usr1-refused" "term-sent"
}

@test "seccomp: two conditions on one argument match either (SCMP_CMP_MASKED_EQ)" {
	local id
	id="$(new_id)"
	# Signal 10 or 12 (SIGUSR1, SIGUSR2) refused: (sig & 0xff) == 10 or == 12.
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"args": [{"index": 1, "value": 255, "valueTwo": 10, "op": "SCMP_CMP_MASKED_EQ"},
			{"index": 1, "value": 255, "valueTwo": 12, "op": "SCMP_CMP_MASKED_EQ"}]}]}'
	set_args sh -c 'sleep 100 & p=$!; kill -USR1 $p || echo usr1-refused; kill -USR2 $p || echo usr2-refused; kill -TERM $p && echo term-sent'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "usr1-refused" "usr2-refused" "term-sent"
}

@test "seccomp: syscalls unknown to libseccomp or absent on this architecture are skipped like libseccomp does" {
	[ "$(uname -m)" = x86_64 ] || skip "the absent syscall (socketcall) is chosen for x86_64"
	local id
	id="$(new_id)"
	# socketcall exists on x86 only; with SCMP_ARCH_X86 listed the rule
	# applies there and is left out of the x86_64 part of the filter.
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
		"architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		"syscalls": [
			{"names": ["socketcall"], "action": "SCMP_ACT_KILL"},
			{"names": ["husk_no_such_syscall", "socketcall", "mkdir"], "action": "SCMP_ACT_ERRNO"}]}'
	set_args sh -c 'mkdir /dev/shm/d; echo "mkdir=$?"'
	run -0 husk --debug run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "mkdir=1" 'syscall \"husk_no_such_syscall\" is unknown to libseccomp, skipped'
}

@test "seccomp: flags are passed to seccomp(2)" {
	local id
	id="$(new_id)"
	deny_mkdir
	update_config '.linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_TSYNC"]'
	set_args sh -c 'mkdir /dev/shm/d; echo "mkdir=$?"'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "mkdir=1"
}

@test "seccomp: a notify listener receives the fd and the state, and answers" {
	local id listener sock pid
	id="$(new_id)"
	listener="$(build_tool seccomp-listener)" || fail "cannot build seccomp-listener"
	sock="$TEST_DIR/listener.sock"
	"$listener" -state "$TEST_DIR/state.json" -errno 28 "$sock" 3>&- &
	pid=$!
	track_bg "$pid"
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	set_seccomp "$(jq -n --arg l "$sock" '{defaultAction: "SCMP_ACT_ALLOW", listenerPath: $l,
		listenerMetadata: "husk-test", syscalls: [{names: ["mkdir"], action: "SCMP_ACT_NOTIFY"}]}')"
	update_config '.annotations = {"org.test": "yes"}'
	set_args sh -c 'mkdir /dev/shm/d; echo "mkdir=$?"; sleep 1000'
	create_bg "$id"
	husk start "$id" 3>&-
	for _ in $(seq 100); do grep -q "mkdir=" "$TEST_DIR/$id.out" && break; sleep 0.05; done
	assert_contains "$(cat "$TEST_DIR/$id.out" "$TEST_DIR/$id.err")" "No space left on device" "mkdir=1"
	local st
	st="$(cat "$TEST_DIR/state.json")"
	[ "$(jq -r '.fds | join(",")' <<<"$st")" = seccompFd ] || fail "fds: $st"
	[ "$(jq -r .metadata <<<"$st")" = husk-test ] || fail "metadata: $st"
	[ "$(jq -r .pid <<<"$st")" = "$(container_pid "$id")" ] || fail "pid: $st vs $(container_pid "$id")"
	[ "$(jq -r .state.id <<<"$st")" = "$id" ] || fail "state.id: $st"
	[ "$(jq -r .state.bundle <<<"$st")" = "$BUNDLE" ] || fail "state.bundle: $st"
	[ "$(jq -r .state.status <<<"$st")" = creating ] || fail "state.status: $st"
	[ "$(jq -r '.state.annotations["org.test"]' <<<"$st")" = yes ] || fail "annotations: $st"
	husk delete --force "$id"
	# The listener sees the filter go away with the container, and exits.
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	! kill -0 "$pid" 2>/dev/null || fail "the listener still runs"
}

@test "seccomp: a listener that is not there fails create and leaves nothing" {
	local id
	id="$(new_id)"
	set_seccomp "$(jq -n --arg l "$TEST_DIR/nobody.sock" '{defaultAction: "SCMP_ACT_ALLOW", listenerPath: $l,
		syscalls: [{names: ["mkdir"], action: "SCMP_ACT_NOTIFY"}]}')"
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.seccomp.listenerPath" "nobody.sock"
	assert_no_container "$id"
}

@test "seccomp: bad profiles get an error naming the field and leave nothing" {
	local id profile want
	while IFS='|' read -r profile want; do
		id="$(new_id)"
		set_seccomp "$profile"
		run ! husk create --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$output" "config.json: $want"
		assert_no_container "$id"
	done <<-'EOF'
		{"defaultAction": "SCMP_ACT_DENY"}|linux.seccomp.defaultAction: unknown action "SCMP_ACT_DENY"
		{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_Z80"]}|linux.seccomp.architectures[0]: unknown architecture "SCMP_ARCH_Z80"
		{"defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_FAST"]}|linux.seccomp.flags[0]: unknown flag "SECCOMP_FILTER_FLAG_FAST"
		{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": [], "action": "SCMP_ACT_ERRNO"}]}|linux.seccomp.syscalls[0].names: must not be empty
		{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_KILL", "errnoRet": 1}]}|linux.seccomp.syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE return an errno
		{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 9, "value": 1, "op": "SCMP_CMP_EQ"}]}]}|linux.seccomp.syscalls[0].args[0].index: must be below 6, got 9
		{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]}|linux.seccomp.listenerPath: must be set
		{"defaultAction": "SCMP_ACT_NOTIFY", "listenerPath": "/l"}|linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action
	EOF
}

# syscallnr_in_rootfs: tests/cmd/syscallnr, built static, as /bin/syscallnr.
syscallnr_in_rootfs() {
	(cd "$REPO_ROOT" && CGO_ENABLED=0 go build -o "$BUNDLE/rootfs/bin/syscallnr" ./tests/cmd/syscallnr) ||
		fail "cannot build tests/cmd/syscallnr"
}

# allow_known_syscalls: default EPERM, every syscall this machine's kernel
# headers name allowed but those given.
allow_known_syscalls() {
	local hdr=/usr/include/x86_64-linux-gnu/asm/unistd_64.h names
	[ "$(uname -m)" = x86_64 ] && [ -r "$hdr" ] || skip "needs x86_64 and its kernel headers ($hdr)"
	names="$(grep -oP '^#define __NR_\K\w+' "$hdr" | grep -vx -e "${1:-none}" -e "${2:-none}" | jq -R . | jq -cs .)"
	set_seccomp "$(jq -n --argjson n "$names" '{defaultAction: "SCMP_ACT_ERRNO",
		architectures: ["SCMP_ARCH_X86_64"], syscalls: [{names: $n, action: "SCMP_ACT_ALLOW"}]}')"
}

@test "seccomp: a syscall newer than the profile gets ENOSYS (the -ENOSYS stub), a known one denied keeps EPERM" {
	syscallnr_in_rootfs
	allow_known_syscalls mkdir
	local id
	id="$(new_id)"
	# 1000: no kernel has it; 83: mkdir, named nowhere but below the
	# profile's highest syscall: the default action.
	set_args syscallnr 1000 83
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "1000 ENOSYS" "83 EPERM"
	# The same with runc, for reference.
	if [ -x /usr/sbin/runc ]; then
		run -0 /usr/sbin/runc --root "$TEST_DIR/runc" run --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$output" "1000 ENOSYS" "83 EPERM"
	fi
}

@test "seccomp: clone3 not named by an older profile gets ENOSYS, so libc falls back to clone" {
	syscallnr_in_rootfs
	allow_known_syscalls clone3
	local id
	id="$(new_id)"
	set_args syscallnr 435
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "435 ENOSYS" ] || fail "clone3: $output"
}

@test "seccomp: with an allowing default action no stub hides new syscalls" {
	syscallnr_in_rootfs
	deny_mkdir
	local id
	id="$(new_id)"
	# 1000 is ENOSYS from the kernel itself; getppid (110) runs.
	set_args syscallnr 1000 110
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "1000 ENOSYS" "110 0"
}

@test "seccomp: SCMP_ACT_NOTIFY on write is refused with runc's reason" {
	local id
	id="$(new_id)"
	set_seccomp "$(jq -n --arg l "$TEST_DIR/l.sock" '{defaultAction: "SCMP_ACT_ALLOW", listenerPath: $l,
		syscalls: [{names: ["mkdir", "write"], action: "SCMP_ACT_NOTIFY"}]}')"
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.seccomp.syscalls[0].names[1]" "SCMP_ACT_NOTIFY cannot be used for the write syscall"
	assert_no_container "$id"
}

@test "seccomp: an unreachable listener fails create with 'failed to connect with seccomp agent'" {
	local id
	id="$(new_id)"
	set_seccomp "$(jq -n --arg l "$TEST_DIR/nobody.sock" '{defaultAction: "SCMP_ACT_ALLOW", listenerPath: $l,
		syscalls: [{names: ["mkdir"], action: "SCMP_ACT_NOTIFY"}]}')"
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.seccomp.listenerPath" "failed to connect with seccomp agent" "nobody.sock"
	assert_no_container "$id"
}

# start_listener SOCK: a seccomp-listener answering CONTINUE on SOCK
# (bound once this returns).
start_listener() {
	local listener
	listener="$(build_tool seccomp-listener)" || fail "cannot build seccomp-listener"
	rm -f "$1"
	"$listener" -state "$1.state" "$1" </dev/null >/dev/null 2>&1 3>&- &
	track_bg "$!"
	for _ in $(seq 200); do [ -S "$1" ] && break; sleep 0.05; done
	[ -S "$1" ] || fail "the listener did not bind $1"
}

# The launcher hands the listener its fd right after loading the filter,
# before any syscall the filter can notify: with a filter that notifies
# every syscall the launcher makes after it (but sendmsg, the hand-over,
# and write, which husk refuses to notify as runc), run and exec return,
# with and without noNewPrivileges. Before, the launcher blocked on its
# own notification (chdir, /etc/passwd's openat and read) for good.
@test "seccomp: a listener gets its fd before the launcher's next syscall (init and exec, NNP true and false)" {
	local id nnp sock="$TEST_DIR/l.sock" names
	names='["open", "openat", "openat2", "read", "pread64", "close", "fcntl", "execve", "execveat",
		"chdir", "fchdir", "prctl", "capset", "capget", "setgroups", "setresuid", "setresgid",
		"setuid", "setgid", "stat", "fstat", "lstat", "newfstatat", "statx", "faccessat",
		"faccessat2", "access", "readlink", "readlinkat", "fchown", "fchownat", "brk", "mmap",
		"munmap", "mprotect", "rt_sigaction", "rt_sigprocmask", "getpid", "gettid", "sched_setattr",
		"setsid", "ioctl", "dup2", "dup3", "lseek", "clone", "clone3", "fork", "vfork", "exit_group",
		"getuid", "getgid", "getdents64", "umask", "keyctl", "sched_setaffinity", "sched_getaffinity"]'
	for nnp in false true; do
		id="$(new_id)"
		start_listener "$sock"
		set_seccomp "$(jq -n --arg l "$sock" --argjson n "$names" '{defaultAction: "SCMP_ACT_ALLOW",
			listenerPath: $l, syscalls: [{names: $n, action: "SCMP_ACT_NOTIFY"}]}')"
		update_config --argjson n "$nnp" '.process.noNewPrivileges = $n | .process.user = {"uid": 1000, "gid": 1000}'
		set_args echo "run-nnp-$nnp"
		run husk run --bundle "$BUNDLE" "$id" </dev/null
		[ "$status" = 0 ] || fail "run (noNewPrivileges $nnp): exit $status: $output"
		assert_contains "$output" "run-nnp-$nnp"
		assert_no_container "$id"
		[ "$(jq -r .pid "$sock.state")" -gt 0 ] || fail "state: $(cat "$sock.state")"
	done
	# An exec, NNP false (the container's) and true (--no-new-privs):
	# each gets a listener of its own on the same path.
	id="$(new_id)"
	update_config '.process.noNewPrivileges = false'
	start_listener "$sock"
	set_args sleep 1000
	run_bg "$id"
	for nnp in false true; do
		start_listener "$sock"
		local flag=()
		[ "$nnp" = false ] || flag=(--no-new-privs)
		run husk exec "${flag[@]}" "$id" echo "exec-nnp-$nnp" </dev/null
		[ "$status" = 0 ] || fail "exec (noNewPrivileges $nnp): exit $status: $output"
		assert_contains "$output" "exec-nnp-$nnp"
		# The state names the exec'd process: gone once it exited.
		[ "$(jq -r .pid "$sock.state")" -gt 0 ] || fail "state: $(cat "$sock.state")"
	done
	run -0 husk kill "$id" KILL
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
	assert_no_container "$id"
}
