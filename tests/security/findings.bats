#!/usr/bin/env bats
# The launcher attacked as issue 33 found it open at d3f0ee8: a cwd that
# leads out of the root, a session keyring joined by name, mounts inside
# /proc and exec.fifo reached through the container's /proc, an exec's
# frames and log lines forged through its forked child, an image's
# /etc/passwd that never ends.

load helpers

setup() {
	setup_husk
	MARKER="husk-escape-$$-$RANDOM"
}

teardown() {
	rm -f "/tmp/$MARKER"
	restore_sysctls
	teardown_husk
}

# host_sleeper DIR [UID]: a host process (sleep) with DIR as its cwd, run
# as UID (default root); its pid in HOST_PID.
host_sleeper() {
	local dir="$1" uid="${2:-0}"
	(cd "$dir" && exec setpriv --reuid "$uid" --regid "$uid" --clear-groups sleep 1000) </dev/null >/dev/null 2>&1 3>&- &
	HOST_PID=$!
	track_bg "$HOST_PID"
}

# escape_cwd_script: writes a marker in its cwd and in tmp/ of it (the
# host's /tmp when the cwd is the host's root).
escape_cwd_script() {
	echo "echo escaped >$MARKER 2>/dev/null; echo escaped >tmp/$MARKER 2>/dev/null; pwd"
}

# assert_not_escaped DIR WHAT: no marker in DIR nor in the host's /tmp.
assert_not_escaped() {
	[ ! -e "$1/$MARKER" ] || fail "$2 wrote in the host's $1"
	[ ! -e "/tmp/$MARKER" ] || fail "$2 wrote in the host's /tmp"
}

# run_refused_cwd CWD HOSTDIR [TEXT]: husk run with process.cwd CWD is
# refused naming it (and saying TEXT), wrote nothing on the host, left
# nothing.
run_refused_cwd() {
	local id
	update_config --arg c "$1" '.process.cwd = $c'
	set_args sh -c "$(escape_cwd_script)"
	id="$(new_id)"
	run husk run --bundle "$BUNDLE" "$id" </dev/null
	echo "process.cwd $1 as uid $(jq .process.user.uid "$BUNDLE/config.json"): $status $output"
	assert_not_escaped "$2" "process.cwd $1"
	[ "$status" -ne 0 ] || fail "process.cwd $1 ran: $output"
	assert_contains "$output" "process.cwd: chdir \"$1\"" "${3:-}"
	assert_no_container "$id"
}

@test "finding 1: process.cwd and exec --cwd /proc/PID/cwd and /proc/PID/root of a host process never start in the host's filesystem, as root and as the user" {
	local hostdir="$TEST_DIR/hostdir" cwd id
	mkdir "$hostdir"
	# No pid namespace: the container's /proc shows the host's processes.
	del_ns pid
	host_sleeper "$hostdir"
	for cwd in "/proc/$HOST_PID/cwd" "/proc/$HOST_PID/root" /proc/1/root; do
		run_refused_cwd "$cwd" "$hostdir"
	done

	# A filter that refuses openat2 (EPERM): runc's way, chdir, then the
	# getcwd check.
	update_config '.process.noNewPrivileges = false
		| .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["openat2"], action: "SCMP_ACT_ERRNO"}]}'
	run_refused_cwd "/proc/$HOST_PID/cwd" "$hostdir" \
		"current working directory is outside of container mount namespace root -- possible container breakout detected"
	update_config '.process.cwd = "/etc"'
	set_args pwd
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	[ "$output" = /etc ] || fail "cwd /etc without openat2: $output"
	update_config 'del(.linux.seccomp)'

	update_config '.process.cwd = "/"'
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	for cwd in "/proc/$HOST_PID/cwd" "/proc/$HOST_PID/root"; do
		run husk exec --cwd "$cwd" "$id" sh -c "$(escape_cwd_script)" </dev/null
		echo "exec --cwd $cwd: $status $output"
		assert_not_escaped "$hostdir" "exec --cwd $cwd"
		[ "$status" -ne 0 ] || fail "exec --cwd $cwd ran: $output"
		assert_contains "$output" "process.cwd: chdir \"$cwd\""
	done
	husk delete --force "$id"
}

@test "finding 1: a cwd only the user may enter is entered as the user, and still inside the root (uid 1000, a host process of uid 1000)" {
	local hostdir="$TEST_DIR/userdir"
	mkdir "$hostdir"
	chown 1000:1000 "$hostdir"
	chmod 0700 "$hostdir"
	del_ns pid
	host_sleeper "$hostdir" 1000
	# Root without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE
	# cannot follow the link of uid 1000's process: only the user may.
	update_config '.process.user = {uid: 1000, gid: 1000}
		| .process.capabilities = {bounding: ["CAP_SETUID", "CAP_SETGID"], effective: [], permitted: []}'
	run_refused_cwd "/proc/$HOST_PID/cwd" "$hostdir"

	# The same user's own directory in the rootfs is still entered.
	mkdir -p "$BUNDLE/rootfs/home/user/private"
	chown 1000:1000 "$BUNDLE/rootfs/home/user/private"
	chmod 0700 "$BUNDLE/rootfs/home/user/private"
	update_config '.process.cwd = "/home/user/private"'
	set_args pwd
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	[ "$output" = /home/user/private ] || fail "output: $output"
}

# keyring_tool: tests/cmd/keyring in the rootfs as /bin/keyring.
keyring_tool() {
	cp "$(static_tool keyring)" "$BUNDLE/rootfs/bin/keyring" || fail "cannot build keyring"
}

@test "finding 2: a container that makes its session keyring joinable and plants a key there is not joined by a later container or exec" {
	local planter victim out
	keyring_tool
	set_args sh -c "keyring plant $MARKER && exec sleep 1000"
	planter="$(new_id)"
	run_bg "$planter"
	# Its process said "planted" (stdout to a file): wait for the line.
	for _ in $(seq 100); do
		grep -q planted "$TEST_DIR/$planter.out" && break
		sleep 0.1
	done
	cat "$TEST_DIR/$planter.out" "$TEST_DIR/$planter.err"
	grep -q planted "$TEST_DIR/$planter.out" || fail "the planter did not plant: $(cat "$TEST_DIR/$planter.err")"

	set_args keyring find
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "a later container: $output"
	[[ "$output" != *"found $MARKER"* ]] || fail "a later container joined the planter's keyring: $output"
	[[ "$output" == none* ]] || fail "a later container: $output"

	set_args sleep 1000
	victim="$(new_id)"
	run_bg "$victim"
	for out in "$victim" "$planter"; do
		run -0 husk exec "$out" keyring find
		echo "an exec into $out: $output"
		[[ "$output" != *"found $MARKER"* ]] || fail "an exec into $out joined the planter's keyring: $output"
	done

	# --no-new-keyring: the process keeps the caller's (no "_ses" made).
	set_args keyring find
	run -0 husk run --no-new-keyring --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "--no-new-keyring: $output"
	[[ "$output" != *"found $MARKER"* ]] || fail "--no-new-keyring: $output"
}

# run_files CMD...: like bats' run, with the output through a file: a
# launcher that hangs holds its stdio, never bats' pipe.
run_files() {
	status=0
	"$@" </dev/null >"$TEST_DIR/run.out" 2>&1 3>&- || status=$?
	output="$(cat "$TEST_DIR/run.out")"
}

# passwd_fails WHAT: run and exec (both fill HOME from /etc/passwd) fail
# saying "process.user: /etc/passwd: WHAT", promptly (a launcher that
# reads forever is stopped by HUSK_TIMEOUT, and the test fails), leaving
# nothing.
passwd_fails() {
	local id HUSK_TIMEOUT=30
	set_args true
	id="$(new_id)"
	run_files husk run --bundle "$BUNDLE" "$id"
	echo "run: $status $output"
	[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "run hung on /etc/passwd ($1)"
	[ "$status" -ne 0 ] || fail "run did not fail: $output"
	assert_contains "$output" "process.user: /etc/passwd: $1"
	assert_no_container "$id"
}

@test "finding 5: an image's /etc/passwd that is /dev/zero, a FIFO, a directory or huge fails run and exec naming the file, never hangs" {
	local id what HUSK_TIMEOUT=30
	# A running container first, /etc/passwd still a good one: exec
	# reads the file as it is at exec time.
	update_config '.process.env = ["PATH=/bin:/sbin"]'
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	for what in zero fifo dir huge; do
		rm -rf "$BUNDLE/rootfs/etc/passwd"
		case $what in
		zero) ln -s /dev/zero "$BUNDLE/rootfs/etc/passwd" ;;
		fifo) mkfifo "$BUNDLE/rootfs/etc/passwd" ;;
		dir) mkdir "$BUNDLE/rootfs/etc/passwd" ;;
		huge) truncate -s 1T "$BUNDLE/rootfs/etc/passwd" ;;
		esac
		local want="not a regular file"
		[ "$what" != huge ] || want="larger than"
		passwd_fails "$want"
		run_files husk exec "$id" true
		echo "exec ($what): $status $output"
		[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "exec hung on /etc/passwd ($what)"
		[ "$status" -ne 0 ] || fail "exec did not fail ($what): $output"
		assert_contains "$output" "process.user: /etc/passwd: $want"
	done
	# A line longer than 64 KiB, as runc's reader refuses it.
	{ head -c 70000 /dev/zero | tr '\0' a; echo ':x:0:0::/root:/bin/sh'; } >"$BUNDLE/rootfs/etc/passwd"
	passwd_fails "line 1 longer than"
	# /dev/null (a masked /etc/passwd) reads empty, as in runc: HOME=/.
	rm -f "$BUNDLE/rootfs/etc/passwd"
	ln -s /dev/null "$BUNDLE/rootfs/etc/passwd"
	set_args sh -c 'echo $HOME'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	[ "$output" = / ] || fail "HOME with /dev/null as /etc/passwd: $output"
	# A HOME the config gives is not looked up: no file is read.
	update_config '.process.env = ["PATH=/bin:/sbin", "HOME=/given"]'
	rm -f "$BUNDLE/rootfs/etc/passwd"
	ln -s /dev/zero "$BUNDLE/rootfs/etc/passwd"
	set_args sh -c 'echo $HOME'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	[ "$output" = /given ] || fail "HOME: $output"
	husk delete --force "$id"
}

# fake_proc_dir DIR: a directory that looks like /proc/PID to an open of
# PID/fd/N: fd/N for every N a symlink to /ran.fifo-target (a regular
# file), so that reopening exec.fifo through it opens a file and does not
# block.
fake_proc_dir() {
	local n
	mkdir -p "$1/fd"
	for n in $(seq 0 64); do
		ln -s /out/target "$1/fd/$n"
	done
}

# ran_out: the container's /out, a host directory, where its process
# says it ran.
ran_out() {
	mkdir -p "$TEST_DIR/out"
	: >"$TEST_DIR/out/target"
	update_config --arg s "$TEST_DIR/out" '.mounts += [{destination: "/out", type: "bind", source: $s, options: ["rbind"]}]'
	set_args sh -c 'echo ran >/out/ran'
}

@test "finding 3: mounts inside /proc are refused naming the field and the value (runc's exceptions kept), leaving nothing" {
	local dest id n
	fake_proc_dir "$BUNDLE/rootfs/fakeproc"
	ran_out
	cp "$BUNDLE/config.json" "$TEST_DIR/config.keep"
	for dest in /proc/1 /proc/self /proc/sys /proc/../proc/1/fd; do
		cp "$TEST_DIR/config.keep" "$BUNDLE/config.json"
		update_config --arg d "$dest" '.mounts += [{destination: $d, type: "bind", source: "rootfs/fakeproc", options: ["rbind"]}]'
		n="$(jq '.mounts | length - 1' "$BUNDLE/config.json")"
		id="$(new_id)"
		run_files husk create --bundle "$BUNDLE" "$id"
		echo "$dest: $status $output"
		[ ! -e "$TEST_DIR/out/ran" ] || fail "a mount at $dest started the process during create"
		[ "$status" -ne 0 ] || fail "a mount at $dest was accepted"
		assert_contains "$output" "mounts[$n].destination" "cannot be mounted because it is inside /proc"
		assert_no_container "$id"
	done
	# Through a symlink of the rootfs: refused where it leads.
	cp "$TEST_DIR/config.keep" "$BUNDLE/config.json"
	ln -s /proc "$BUNDLE/rootfs/procalias"
	update_config '.mounts += [{destination: "/procalias/1", type: "bind", source: "rootfs/fakeproc", options: ["rbind"]}]'
	id="$(new_id)"
	run_files husk create --bundle "$BUNDLE" "$id"
	echo "/procalias/1: $status $output"
	[ ! -e "$TEST_DIR/out/ran" ] || fail "a mount at /procalias/1 started the process during create"
	[ "$status" -ne 0 ] || fail "a mount at /procalias/1 was accepted"
	assert_contains "$output" '"/proc/1" cannot be mounted because it is inside /proc'
	assert_no_container "$id"
	# Not a proc on /proc.
	cp "$TEST_DIR/config.keep" "$BUNDLE/config.json"
	update_config '(.mounts[] | select(.destination == "/proc")) |= {destination: "/proc", type: "tmpfs", source: "tmpfs"}'
	run_files husk create --bundle "$BUNDLE" "$(new_id)"
	[ "$status" -ne 0 ] || fail "a tmpfs on /proc was accepted"
	assert_contains "$output" "destination" '"/proc" cannot be mounted because it is not of type proc'
	# A bind on /proc of a directory that is not a procfs.
	cp "$TEST_DIR/config.keep" "$BUNDLE/config.json"
	update_config '(.mounts[] | select(.destination == "/proc")) |= {destination: "/proc", type: "bind", source: "rootfs/fakeproc", options: ["rbind"]}'
	id="$(new_id)"
	run_files husk create --bundle "$BUNDLE" "$id"
	[ "$status" -ne 0 ] || fail "a bind of a directory on /proc was accepted"
	assert_contains "$output" '"/proc" cannot be mounted because it is not of type proc'
	assert_no_container "$id"
	# lxcfs's files stay allowed.
	cp "$TEST_DIR/config.keep" "$BUNDLE/config.json"
	echo "fake cpuinfo" >"$TEST_DIR/cpuinfo"
	update_config --arg s "$TEST_DIR/cpuinfo" '.mounts += [{destination: "/proc/cpuinfo", type: "bind", source: $s, options: ["bind", "ro"]}]'
	set_args cat /proc/cpuinfo
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	[ "$output" = "fake cpuinfo" ] || fail "/proc/cpuinfo: $output"
}

@test "finding 3: exec.fifo is never reopened through a path the container's mounts can change (a volume on /proc/1 made by a createContainer hook)" {
	local id
	fake_proc_dir "$BUNDLE/rootfs/fakeproc"
	ran_out
	# The hook runs in the container's mount namespace, after the mounts.
	update_config --arg r "$BUNDLE/rootfs" '.hooks.createContainer = [{path: "/bin/sh",
		args: ["sh", "-c", "mount --bind \($r)/fakeproc \($r)/proc/1"]}]'
	id="$(new_id)"
	run_files husk create --bundle "$BUNDLE" "$id"
	echo "create: $status $output"
	[ ! -e "$TEST_DIR/out/ran" ] || fail "a volume on /proc/1 started the process during create"
	[ "$status" -ne 0 ] || fail "create succeeded with a mount on the container's /proc/1: $(husk state "$id")"
	assert_contains "$output" "exec.fifo"
	assert_no_container "$id"
}

# Finding 4: an exec's forked process holds copies of the init socket and
# the log socket until its execve, and the parent reads the init socket
# until the process is set up. Without noNewPrivileges the exec's filter
# is loaded before the credentials: a listener of its own holds the
# forked process in the cwd check's getcwd (docs/architecture.md, the
# launcher's steps; only the launcher calls it under the filter) while the container's pid 1, fd-thief with
# CAP_SYS_PTRACE (and CAP_SYS_ADMIN), takes both with pidfd_getfd and
# writes a forged ERROR frame and log line, and a frame claiming the
# launcher's pid in its credentials (the kernel refuses: not a pid of the
# container's pid namespace). husk reads only what its launcher (and, on the log
# socket, the process it forked) wrote: the forgery is dropped with a
# warning and the exec runs.
@test "finding 4: a container process with CAP_SYS_PTRACE that takes an exec's init and log sockets (pidfd_getfd) and keeps them forges no ERROR frame nor log line, and the exec runs and returns" {
	local id listener sock inode held HUSK_TIMEOUT=60
	listener="$(build_tool seccomp-listener)" || fail "cannot build seccomp-listener"
	cp "$(static_tool fd-thief)" "$BUNDLE/rootfs/fd-thief" || fail "cannot build fd-thief"
	sock="$TEST_DIR/listener.sock"
	# The container's listener answers everything (nothing is notified
	# for its pid 1); the exec's, started once it is up, holds.
	"$listener" -state "$TEST_DIR/state-init.json" "$sock" 3>&- &
	track_bg $!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	update_config --arg l "$sock" '.process.noNewPrivileges = false
		| .process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE", "CAP_SYS_ADMIN"])
		| .root.readonly = false
		| .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $l,
			syscalls: [{names: ["getcwd"], action: "SCMP_ACT_NOTIFY"}]}'
	set_args /fd-thief -held /release.held -release /release -text "$MARKER"
	id="$(new_id)"
	run_bg "$id"
	for _ in $(seq 100); do [ -s "$TEST_DIR/state-init.json" ] && break; sleep 0.05; done
	[ -s "$TEST_DIR/state-init.json" ] || fail "the container's listener got no fd"
	inode="$(stat -c %i "$sock")"
	"$listener" -state "$TEST_DIR/state-exec.json" -hold "$BUNDLE/rootfs/release" "$sock" 3>&- &
	held=$!
	track_bg "$held"
	for _ in $(seq 100); do [ -S "$sock" ] && [ "$(stat -c %i "$sock")" != "$inode" ] && break; sleep 0.05; done

	run_files husk exec "$id" echo "the exec ran"
	echo "husk exec: $status $output"
	echo "fd-thief: $(cat "$TEST_DIR/$id.out")"
	grep -q "^forged on pid" "$TEST_DIR/$id.out" || fail "the attack did not run: $(cat "$TEST_DIR/$id.out")"
	# The launcher is in the runtime's pid namespace: its pid cannot be
	# claimed from the container's, even with CAP_SYS_ADMIN.
	grep -q "^claim of pid [0-9]* refused: no such process" "$TEST_DIR/$id.out" ||
		fail "the launcher's pid was claimed: $(cat "$TEST_DIR/$id.out")"
	[[ "$output" != *"$MARKER"* ]] || fail "the forgery reached husk exec's output: $output"
	[ "$status" -eq 0 ] || fail "the exec failed: $output"
	assert_contains "$output" "the exec ran" "dropped"
	# Without a thief, nothing of the launcher's or its process's (their
	# debug lines included) is dropped. The exec's listener ends with the
	# exec (and unlinks its socket): a new one for this exec.
	wait "$held" || true
	"$listener" -state "$TEST_DIR/state-plain.json" "$sock" 3>&- &
	track_bg $!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	run_files husk --debug exec "$id" echo "a plain exec"
	[ "$status" -eq 0 ] || fail "a plain exec failed: $output"
	assert_contains "$output" "a plain exec" "init: nsexec:"
	[[ "$output" != *dropped* ]] || fail "a plain exec dropped a writer's bytes: $output"
	husk delete --force "$id"
}
