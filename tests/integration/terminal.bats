#!/usr/bin/env bats
# process.terminal: the pty is made inside the container and its master
# sent to --console-socket (here tests/cmd/recvtty), or kept by husk run
# in the foreground.

load helpers

setup() {
	setup_husk
	update_config '.process.terminal = true'
	SOCK="$TEST_DIR/console.sock"
}

# run_tty ID: create with --console-socket and start; wait for the
# container's terminal to close; TTY_OUT is what it printed, \r dropped.
run_tty() {
	create_bg "$1" --console-socket "$SOCK" || return 1
	husk start "$1" 3>&- || return 1
	wait_recvtty
}

# wait_recvtty: recvtty ends once no fd of the pty's slave is open
# anywhere (its read of the master then fails); TTY_OUT is what it got,
# \r dropped.
wait_recvtty() {
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$RECVTTY_PID" 2>/dev/null || break
		sleep 0.05
	done
	! kill -0 "$RECVTTY_PID" 2>/dev/null || fail "recvtty still runs: the terminal was not closed"
	TTY_OUT="$(tr -d '\r' <"$TEST_DIR/tty.out")"
}

# no_mount_ns: the bundle without a mount namespace of its own (and
# without what husk refuses or ignores there).
no_mount_ns() {
	del_ns mount
	update_config '.mounts = [] | .linux.maskedPaths = [] | .linux.readonlyPaths = [] | .root.readonly = false'
}

# assert_no_bundle_mounts: nothing of the bundle is mounted on the host.
assert_no_bundle_mounts() {
	! grep -F "$BUNDLE" /proc/self/mountinfo || fail "mounts left on the host's tree"
}

@test "terminal: a container prints through the pty to the console socket" {
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	set_args echo "hello through the pty"
	run_tty "$id"
	[ "$TTY_OUT" = "hello through the pty" ] || fail "recvtty got: $TTY_OUT"
	# Nothing went to create's own stdio.
	[ ! -s "$TEST_DIR/$id.out" ] || fail "create's stdout: $(cat "$TEST_DIR/$id.out")"
}

@test "terminal: tty inside names the pty, and stdio and /dev/console are it" {
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	set_args sh -c 'tty; for fd in 0 1 2; do readlink /proc/self/fd/$fd; done;
		[ "$(stat -c %t:%T /dev/console)" = "$(stat -c %t:%T "$(tty)")" ] && echo console-is-pty'
	run_tty "$id"
	local lines
	mapfile -t lines <<<"$TTY_OUT"
	[[ "${lines[0]}" =~ ^/dev/pts/[0-9]+$ ]] || fail "tty printed: ${lines[0]}"
	[ "${lines[1]}" = "${lines[0]}" ] && [ "${lines[2]}" = "${lines[0]}" ] && [ "${lines[3]}" = "${lines[0]}" ] ||
		fail "stdio: $TTY_OUT"
	[ "${lines[4]}" = console-is-pty ] || fail "/dev/console: $TTY_OUT"
}

@test "terminal: the process leads a session with the pty as controlling terminal" {
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	# Fields 6 and 7 of /proc/PID/stat: session, tty_nr.
	set_args sh -c 'set -- $(cut -d" " -f6,7 /proc/$$/stat); echo "sid=$1 pid=$$ tty=$2"; [ -r /dev/tty ] && echo has-dev-tty'
	run_tty "$id"
	assert_contains "$TTY_OUT" "sid=1 pid=1" "has-dev-tty"
	[[ "$TTY_OUT" != *"tty=0"* ]] || fail "no controlling terminal: $TTY_OUT"
}

@test "terminal: consoleSize sets the pty's size" {
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	update_config '.process.consoleSize = {height: 41, width: 123}'
	set_args stty size
	run_tty "$id"
	[ "$TTY_OUT" = "41 123" ] || fail "stty size: $TTY_OUT"
}

@test "terminal: input reaches the process through the pty" {
	local id
	id="$(new_id)"
	printf 'typed-line\n' >"$TEST_DIR/tty.in"
	start_recvtty
	set_args sh -c 'read line; echo "got: $line"'
	run_tty "$id"
	assert_contains "$TTY_OUT" "got: typed-line"
}

@test "terminal: a non-root process owns its pty" {
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args sh -c 'stat -c "%u %a" "$(tty)"; id -u'
	run_tty "$id"
	assert_contains "$TTY_OUT" "1000 620" "1000"
}

@test "terminal: husk run -d with --console-socket" {
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	set_args echo detached-tty
	husk run -d --console-socket "$SOCK" --bundle "$BUNDLE" "$id" </dev/null >"$TEST_DIR/run.out" 2>&1 3>&- ||
		fail "run -d: $(cat "$TEST_DIR/run.out")"
	for _ in $(seq 200); do kill -0 "$RECVTTY_PID" 2>/dev/null || break; sleep 0.05; done
	[ "$(tr -d '\r' <"$TEST_DIR/tty.out")" = detached-tty ] || fail "recvtty got: $(cat "$TEST_DIR/tty.out")"
}

@test "terminal: husk run in the foreground attaches to husk's own stdio" {
	local id
	id="$(new_id)"
	set_args sh -c 'tty; read line; echo "got: $line"; exit 5'
	run -5 husk run --bundle "$BUNDLE" "$id" <<<"piped-in"
	# The terminal echoes the input; husk's side is no terminal, so the
	# output has no \r.
	[[ "$output" =~ /dev/pts/[0-9]+ ]] || fail "output: $output"
	assert_contains "$output" "got: piped-in"
	[[ "$output" != *$'\r'* ]] || fail "output has \\r: $output"
	assert_no_container "$id"
}

@test "terminal: husk run -t gives a terminal to a process without one" {
	local id
	id="$(new_id)"
	update_config '.process.terminal = false'
	set_args tty
	run -0 husk run -t --bundle "$BUNDLE" "$id" </dev/null
	[[ "$output" =~ ^/dev/pts/[0-9]+$ ]] || fail "output: $output"
}

@test "terminal: husk run in the foreground from a terminal (raw mode, size)" {
	command -v script >/dev/null || skip "no script(1) to make a terminal"
	local id
	id="$(new_id)"
	set_args sh -c 'stty size; echo from-a-tty'
	# script gives husk a pty as its stdin and stdout.
	run -0 script -qec "stty rows 30 cols 90; timeout --foreground -k 5 $HUSK_TIMEOUT $HUSK_BIN --root $HUSK_ROOT run --bundle $BUNDLE $id" /dev/null </dev/null
	assert_contains "$output" "30 90" "from-a-tty"
	assert_no_container "$id"
}

@test "terminal: create without --console-socket fails and leaves nothing" {
	local id
	id="$(new_id)"
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "process.terminal" "--console-socket"
	assert_no_container "$id"
}

@test "terminal: --console-socket without a terminal fails and leaves nothing" {
	local id
	id="$(new_id)"
	update_config '.process.terminal = false'
	run ! husk create --console-socket "$SOCK" --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "--console-socket" "process.terminal is false"
	assert_no_container "$id"
}

@test "terminal: a console socket nobody listens on fails create and leaves nothing" {
	local id
	id="$(new_id)"
	run ! husk create --console-socket "$TEST_DIR/nobody.sock" --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "--console-socket" "nobody.sock"
	assert_no_container "$id"
}

@test "terminal: a bad consoleSize gets an error naming the field" {
	local id
	id="$(new_id)"
	update_config '.process.consoleSize = {height: 70000, width: 80}'
	run ! husk create --console-socket "$SOCK" --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "config.json: process.consoleSize"
	assert_no_container "$id"
}

@test "terminal: in a user namespace" {
	requires_userns
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	set_ns user
	update_config '.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
	set_args sh -c 'tty; id -u'
	run_tty "$id"
	[[ "$TTY_OUT" =~ ^/dev/pts/[0-9]+$'\n'0$ ]] || fail "output: $TTY_OUT"
}

@test "terminal: ONLCR is cleared on the container's pty (lines end in \\n, as runc)" {
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	set_args echo hi
	run_tty "$id"
	# run_tty drops \r: look at the bytes recvtty received.
	[ "$(od -An -c "$TEST_DIR/tty.out" | tr -s ' ')" = " h i \n" ] ||
		fail "pty output: $(od -c "$TEST_DIR/tty.out")"
}

@test "terminal: ONLCR is cleared also when husk run's stdin is a terminal" {
	command -v script >/dev/null || skip "no script(1) to make a terminal"
	local id
	id="$(new_id)"
	set_args sh -c 'stty -a | grep -o -- "-onlcr" || echo onlcr-set'
	run -0 script -qec "timeout --foreground -k 5 $HUSK_TIMEOUT $HUSK_BIN --root $HUSK_ROOT run --bundle $BUNDLE $id" /dev/null </dev/null
	assert_contains "$output" "-onlcr"
	[[ "$output" != *onlcr-set* ]] || fail "the container's pty has ONLCR: $output"
	assert_no_container "$id"
}

@test "terminal: a read-only /dev is made read-only after /dev/console, /dev/pts and the links, as runc (runc spec bundle)" {
	runc_spec_config
	update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]'
	local id
	id="$(new_id)"
	start_recvtty -no-stdin
	set_args sh -c '[ "$(stat -c %t:%T /dev/console)" = "$(stat -c %t:%T "$(tty)")" ] && echo console-is-pty;
		[ -L /dev/ptmx ] && [ -L /dev/fd ] && [ -c /dev/null ] && echo links-and-nodes;
		touch /dev/x 2>/dev/null && echo rw || echo ro;
		awk "\$5 == \"/dev\" {print \$6}" /proc/self/mountinfo'
	run_tty "$id"
	local lines
	mapfile -t lines <<<"$TTY_OUT"
	[ "${lines[0]}" = console-is-pty ] && [ "${lines[1]}" = links-and-nodes ] && [ "${lines[2]}" = ro ] ||
		fail "output: $TTY_OUT"
	[[ ",${lines[3]}," == *,ro,* ]] || fail "/dev's options: ${lines[3]}"
}

# Without a mount namespace of its own the container shares the host's
# /dev: its pty is one of the host's /dev/ptmx, as runc makes it, and no
# /dev/console is bound (that would be a mount on the host's tree).
@test "terminal: without a mount namespace husk run's process has a pty of the host's" {
	local id
	id="$(new_id)"
	no_mount_ns
	set_args sh -c '[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo stdio-is-a-tty; exit 3'
	run -3 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$(tr -d '\r' <<<"$output")" = stdio-is-a-tty ] || fail "output: $output"
	assert_no_container "$id"
	assert_no_bundle_mounts
}

@test "terminal: exec -t into a container without a mount namespace: a pty of the host's /dev/ptmx, closed after" {
	local id hostpts
	id="$(new_id)"
	no_mount_ns
	update_config '.process.terminal = false'
	set_args sleep 1000
	run_bg "$id"
	# An exec'd process of such a container has the host's root (as in
	# runc: nothing chroots it), so its pty's slave is on the host's devpts.
	hostpts="$(stat -c %d /dev/pts)"
	start_recvtty -no-stdin
	husk exec -t --console-socket "$SOCK" "$id" \
		sh -c '[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo stdio-is-a-tty; stat -L -c "dev=%d" /proc/self/fd/0' 3>&-
	wait_recvtty
	[ "$TTY_OUT" = "stdio-is-a-tty"$'\n'"dev=$hostpts" ] || fail "through the console socket: $TTY_OUT"
	# In the foreground husk keeps the master itself.
	run -4 husk exec -t "$id" sh -c '[ -t 0 ] && echo foreground-tty; exit 4' </dev/null
	[ "$(tr -d '\r' <<<"$output")" = foreground-tty ] || fail "foreground: $output"
	husk delete --force "$id"
	assert_no_container "$id"
	assert_no_bundle_mounts
}

@test "terminal: without a mount namespace a failing exec -t or create leaves no pty open and nothing else" {
	local id
	id="$(new_id)"
	no_mount_ns
	update_config '.process.terminal = false'
	set_args sleep 1000
	run_bg "$id"
	# The pty is made and sent before the path lookup fails: recvtty ends
	# only when no fd of its slave is left open.
	start_recvtty -no-stdin
	run -255 --separate-stderr husk exec -t --console-socket "$SOCK" "$id" /no-such-binary-s38 3>&-
	assert_contains "$stderr" "/no-such-binary-s38"
	wait_recvtty
	# The container runs on, with its own process alone.
	[ "$(container_status "$id")" = running ] || fail "status: $(container_status "$id")"
	run -0 husk ps --format json "$id"
	[ "$output" = "[$(cat "$TEST_DIR/$id.pid")]" ] || fail "processes in the container: $output"
	run ! --separate-stderr husk exec -t --console-socket "$TEST_DIR/nobody.sock" "$id" true 3>&-
	assert_contains "$stderr" "--console-socket" "nobody.sock"
	husk delete --force "$id"
	assert_no_container "$id"

	# The container's own process: create fails, nothing is left.
	update_config '.process.terminal = true'
	set_args /no-such-binary-s38
	start_recvtty -no-stdin
	run ! --separate-stderr husk create --console-socket "$SOCK" --bundle "$BUNDLE" "$id" </dev/null 3>&-
	assert_contains "$stderr" "/no-such-binary-s38"
	wait_recvtty
	assert_no_container "$id"
	assert_no_bundle_mounts
}
