#!/usr/bin/env bats
# NOTIFY_SOCKET: under a service manager (a systemd unit of Type=notify)
# the container's readiness is relayed, as runc relays it
# (libcontainer/notify). socat on a datagram socket stands in for systemd
# here; tests/vm/suites/systemd.bats runs a real unit.

load helpers

setup() {
	setup_husk
	command -v socat >/dev/null || skip "no socat (apt-get install socat) to stand in for systemd"
	local sdnotify
	sdnotify="$(build_tool sdnotify)" || fail "cannot build tests/cmd/sdnotify"
	cp "$sdnotify" "$BUNDLE/rootfs/bin/sdnotify"
	HOST_SOCK="$TEST_DIR/host.sock"
	socat -u "UNIX-RECV:$HOST_SOCK" "OPEN:$TEST_DIR/host.msgs,creat,append" </dev/null 3>&- &
	track_bg $!
	for _ in $(seq 100); do [ -S "$HOST_SOCK" ] && return 0; sleep 0.05; done
	fail "socat did not listen on $HOST_SOCK"
}

# host_got: what the stand-in for systemd received.
host_got() {
	cat "$TEST_DIR/host.msgs" 2>/dev/null
}

# wait_host_got TEXT: until the host's socket has received TEXT.
wait_host_got() {
	for _ in $(seq 200); do [ "$(host_got)" = "$1" ] && return 0; sleep 0.05; done
	fail "the host's socket got '$(host_got)', not '$1'"
}

@test "notify: run -d returns once the container says READY=1; the host gets READY=1 with MAINPID, nothing else the container sent" {
	local id pid bg
	id="$(new_id)"
	set_args sh -c 'while [ ! -e /go ]; do sleep 0.1; done
		sdnotify MAINPID=1 STATUS=hostile
		sdnotify STATUS=starting READY=1
		exec sleep 1000'
	NOTIFY_SOCKET="$HOST_SOCK" husk run -d --bundle "$BUNDLE" "$id" </dev/null >"$TEST_DIR/run.out" 2>&1 3>&- &
	bg=$!
	track_bg "$bg"
	wait_for_status "$id" running
	pid="$(container_pid "$id")"
	# Running but not ready: run -d still waits, the host has heard nothing.
	kill -0 "$bg" || fail "run -d returned before READY=1: $(cat "$TEST_DIR/run.out")"
	[ -z "$(host_got)" ] || fail "the host got '$(host_got)' before READY=1"
	touch "$BUNDLE/rootfs/go"
	wait "$bg" || fail "run -d failed: $(cat "$TEST_DIR/run.out")"
	wait_host_got "$(printf 'MAINPID=%s\nREADY=1' "$pid")"
	[ "$(container_status "$id")" = running ]
	husk delete -f "$id"
	[ ! -e "$HUSK_ROOT/$id" ] || fail "state dir left: $(ls -R "$HUSK_ROOT/$id")"
}

@test "notify: create + start; the container sees NOTIFY_SOCKET and a read-only socket dir, start waits for READY=1" {
	local id pid
	id="$(new_id)"
	update_config '.process.env += ["NOTIFY_SOCKET=/spec/own.sock"]'
	set_args sh -c 'echo "env=$NOTIFY_SOCKET"; env | grep -c ^NOTIFY_SOCKET=
		ls -l /run/notify/notify.sock >/dev/null && echo SOCK
		touch /run/notify/x 2>/dev/null && echo WROTE
		rm -f /run/notify/notify.sock 2>/dev/null; [ -S /run/notify/notify.sock ] && echo KEPT
		sdnotify READY=1; exec sleep 1000'
	NOTIFY_SOCKET="$HOST_SOCK" create_bg "$id"
	[ -d "$HUSK_ROOT/$id/notify" ] || fail "no notify dir in the state dir"
	run -0 env NOTIFY_SOCKET="$HOST_SOCK" "$HUSK_BIN" --root "$HUSK_ROOT" start "$id"
	pid="$(container_pid "$id")"
	wait_host_got "$(printf 'MAINPID=%s\nREADY=1' "$pid")"
	run -0 cat "$TEST_DIR/$id.out"
	[ "$output" = "$(printf 'env=/run/notify/notify.sock\n1\nSOCK\nKEPT')" ] || fail "in the container: $output"
	grep -q " /run/notify ro,nosuid,nodev,noexec" "/proc/$pid/mountinfo" || fail "/run/notify: $(grep notify "/proc/$pid/mountinfo")"
}

@test "notify: a container that exits before READY=1: run -d returns, the host hears nothing" {
	local id
	id="$(new_id)"
	set_args sh -c 'exit 3'
	run -0 env NOTIFY_SOCKET="$HOST_SOCK" "$HUSK_BIN" --root "$HUSK_ROOT" run -d --bundle "$BUNDLE" "$id" </dev/null 3>&-
	[ -z "$(host_got)" ] || fail "the host got '$(host_got)'"
	husk delete -f "$id"
}

@test "notify: without NOTIFY_SOCKET nothing is mounted or set" {
	local id
	id="$(new_id)"
	set_args sh -c 'echo "env=${NOTIFY_SOCKET:-none}"; [ -e /run/notify ] && echo MOUNTED; true'
	run -0 env -u NOTIFY_SOCKET "$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$id" </dev/null 3>&-
	[ "$output" = "env=none" ] || fail "$output"
}

@test "notify: a restore under NOTIFY_SOCKET that CRIU fails leaves no state dir (its notify directory included), cgroup or mount" {
	command -v criu >/dev/null || skip "no criu binary"
	local id
	id="$(new_id)"
	mkdir "$TEST_DIR/bad"
	echo '["/dev/null","/dev/null","/dev/null"]' >"$TEST_DIR/bad/descriptors.json"
	echo garbage >"$TEST_DIR/bad/inventory.img"
	run ! --separate-stderr env NOTIFY_SOCKET="$HOST_SOCK" "$HUSK_BIN" --root "$HUSK_ROOT" restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/bad" "$id" </dev/null 3>&-
	assert_contains "$stderr" "restore container $id" "criu"
	assert_no_container "$id"
	! grep -q -e criu-root -e "$HUSK_ROOT/$id" /proc/self/mountinfo || fail "mounts left: $(grep -e criu-root -e "$HUSK_ROOT/$id" /proc/self/mountinfo)"
	[ -z "$(find /sys/fs/cgroup -maxdepth 5 -name "*$id*" 2>/dev/null)" ] || fail "cgroups left: $(find /sys/fs/cgroup -maxdepth 5 -name "*$id*")"
	[ -z "$(host_got)" ] || fail "the host got '$(host_got)'"
}
