#!/usr/bin/env bats
# husk's systemd cgroup driver (--systemd-cgroup) on a pure cgroup v2
# host with systemd as PID 1 (VM setup a): a transient scope per
# container, resources as unit properties, runc's slice:prefix:name,
# delete stops the unit. Without systemd (setup b) only the refusal runs.

load ../../integration/helpers

setup() {
	# Skip before building a bundle: seconds per test under TCG.
	case "$BATS_TEST_DESCRIPTION" in
	"systemd: without systemd running"*) [ "$(cat /proc/1/comm)" != systemd ] || skip "PID 1 is systemd" ;;
	*) need_systemd ;;
	esac
	setup_husk
	set_ns cgroup
}

teardown() {
	local u
	# A dbus-daemon a test stopped is let go first: nothing below may hang.
	[ -s "${TEST_DIR:-/nonexistent}/stopped-dbus" ] && kill -CONT "$(cat "$TEST_DIR/stopped-dbus")" 2>/dev/null || true
	[ -n "${TRACEFS:-}" ] && echo 0 >"$TRACEFS/events/cgroup/cgroup_attach_task/enable" 2>/dev/null || true
	for u in $(systemctl list-units --all --plain --no-legend 'husk-husk-t*' 2>/dev/null | awk '{print $1}'); do
		systemctl stop "$u" >/dev/null 2>&1 || true
		systemctl reset-failed "$u" >/dev/null 2>&1 || true
	done
	teardown_husk
}

need_systemd() {
	[ "$(cat /proc/1/comm)" = systemd ] && [ -d /run/systemd/system ] ||
		skip "PID 1 is $(cat /proc/1/comm), not systemd: the systemd driver cannot run here"
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || skip "not a pure cgroup v2 host"
}

# sd ARGS: husk with the systemd driver.
sd() {
	husk --systemd-cgroup "$@"
}

# unit_state UNIT: LoadState and ActiveState, e.g. "loaded active" or
# "not-found inactive".
unit_state() {
	echo "$(systemctl show -P LoadState "$1") $(systemctl show -P ActiveState "$1")"
}

# scope_id: a container id (its scope is husk-<id>.scope, which the
# teardown recognises).
scope_id() {
	new_id
}

@test "systemd: without systemd running, --systemd-cgroup fails with that reason and leaves nothing" {
	[ "$(cat /proc/1/comm)" != systemd ] || skip "PID 1 is systemd"
	local id
	id="$(new_id)"
	run ! --separate-stderr sd run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "--systemd-cgroup" "systemd is not running" "PID 1 is"
	assert_no_container "$id"
}

@test "systemd: a container runs in a transient scope with Delegate=yes; systemctl shows MemoryMax and TasksMax" {
	need_systemd
	local id unit
	id="$(scope_id)"
	unit="husk-$id.scope"
	update_config --arg p "system.slice:husk:$id" '.linux.cgroupsPath = $p
		| .linux.resources.memory = {"limit": 33554432} | .linux.resources.pids = {"limit": 20}'
	set_args sleep 1000
	sd create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || fail "create: $(cat "$TEST_DIR/err")"
	run -0 sd start "$id"
	grep -qx "0::/system.slice/$unit" "/proc/$(container_pid "$id")/cgroup" ||
		fail "init in $(cat "/proc/$(container_pid "$id")/cgroup")"
	[ "$(systemctl show -P MemoryMax "$unit")" = 33554432 ] || fail "MemoryMax: $(systemctl show -P MemoryMax "$unit")"
	[ "$(systemctl show -P TasksMax "$unit")" = 20 ] || fail "TasksMax: $(systemctl show -P TasksMax "$unit")"
	[ "$(systemctl show -P Delegate "$unit")" = yes ] || fail "Delegate: $(systemctl show -P Delegate "$unit")"
	[ "$(cat "/sys/fs/cgroup/system.slice/$unit/memory.max")" = 33554432 ]
	# update goes through the unit too.
	run -0 sd update --memory 64m --pids-limit 30 "$id"
	[ "$(systemctl show -P MemoryMax "$unit")" = 67108864 ] || fail "MemoryMax after update: $(systemctl show -P MemoryMax "$unit")"
	[ "$(systemctl show -P TasksMax "$unit")" = 30 ] || fail "TasksMax after update: $(systemctl show -P TasksMax "$unit")"
	# exec'd processes join the scope.
	run -0 sd exec "$id" cat /proc/self/cgroup
	[ "$output" = "0::/" ] || fail "exec'd process: $output"
	# pause and resume.
	run -0 sd pause "$id"
	[ "$(container_status "$id")" = paused ]
	run -0 sd resume "$id"
	run -0 sd delete --force "$id"
	[ "$(unit_state "$unit")" = "not-found inactive" ] || fail "unit after delete: $(unit_state "$unit")"
	[ ! -d "/sys/fs/cgroup/system.slice/$unit" ] || fail "scope cgroup left"
}

@test "systemd: without a cgroupsPath the scope is system.slice/husk-<id>.scope, as runc's default" {
	need_systemd
	local id
	id="$(scope_id)"
	set_args cat /proc/self/cgroup
	update_config 'del(.linux.namespaces[] | select(.type == "cgroup"))'
	run -0 sd run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "0::/system.slice/husk-$id.scope" ] || fail "cgroup: $output"
	[ "$(unit_state "husk-$id.scope")" = "not-found inactive" ] || fail "unit left: $(unit_state "husk-$id.scope")"
}

@test "systemd: org.systemd.property.* annotations set unit properties" {
	need_systemd
	local id unit
	id="$(scope_id)"
	unit="husk-$id.scope"
	update_config '.annotations["org.systemd.property.TimeoutStopSec"] = "17"
		| .annotations["org.systemd.property.CPUWeight"] = "uint64 77"'
	set_args sleep 1000
	sd create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || fail "create: $(cat "$TEST_DIR/err")"
	[ "$(systemctl show -P TimeoutStopUSec "$unit")" = 17s ] || fail "TimeoutStopUSec: $(systemctl show -P TimeoutStopUSec "$unit")"
	[ "$(systemctl show -P CPUWeight "$unit")" = 77 ] || fail "CPUWeight: $(systemctl show -P CPUWeight "$unit")"
	run -0 sd delete --force "$id"
	update_config '.annotations["org.systemd.property.MemoryMax"] = "lots"'
	run ! --separate-stderr sd create --bundle "$BUNDLE" "$(scope_id)" </dev/null
	assert_contains "$stderr" 'org.systemd.property.MemoryMax' lots
}

@test "systemd: an OOM-killed container's unit is removed by delete and the id can be used again" {
	need_systemd
	local id unit i
	id="$(scope_id)"
	unit="husk-$id.scope"
	update_config '.linux.resources.memory = {"limit": 33554432, "swap": 33554432}'
	set_args awk 'BEGIN { s = "x"; while (length(s) < 67108864) s = s s }'
	for i in 1 2; do
		run -137 sd run --bundle "$BUNDLE" "$id" </dev/null
		[ "$(unit_state "$unit")" = "not-found inactive" ] || fail "round $i: unit left: $(unit_state "$unit")"
	done
}

@test "systemd: a cgroupsPath that is not slice:prefix:name is refused naming it, and leaves nothing" {
	need_systemd
	local id p
	for p in /husk/x a:b notaslice:husk:c1 a.slice:b:c:d; do
		id="$(scope_id)"
		update_config --arg p "$p" '.linux.cgroupsPath = $p'
		run ! --separate-stderr sd create --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$stderr" linux.cgroupsPath "$p"
		assert_no_container "$id"
	done
	[ -z "$(systemctl list-units --all --plain --no-legend 'husk-husk-t*')" ] || fail "units left"
}

@test "systemd: husk killed at random points of create, then delete --force leaves no cgroup and no unit; the id is reusable" {
	need_systemd
	local id i pid unit
	set_args sleep 1000
	for i in $(seq 0 9); do
		id="$(scope_id)"
		unit="husk-$id.scope"
		"$HUSK_BIN" --root "$HUSK_ROOT" --systemd-cgroup create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- &
		pid=$!
		sleep "0.$((i * 37 % 10))$((i * 7 % 10))"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		sd delete --force "$id" || fail "delete --force $id after kill -9 at step $i"
		[ ! -d "/sys/fs/cgroup/system.slice/$unit" ] || fail "scope cgroup left (step $i)"
		[ "$(unit_state "$unit")" = "not-found inactive" ] || fail "unit left (step $i): $(unit_state "$unit")"
		# The same id again: never "unit already exists".
		sd create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || fail "re-create $id: $(cat "$TEST_DIR/err")"
		sd delete --force "$id" || fail "delete $id"
	done
}

@test "systemd: 100 run/delete cycles leave no cgroup and no unit" {
	need_systemd
	local base i left
	base="$(scope_id)"
	set_args true
	# husk run deletes the container when it exits (as runc run without
	# --keep): each run is one run/delete cycle.
	for i in $(seq 100); do
		sd run --bundle "$BUNDLE" "$base-$i" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || fail "run $i: $(cat "$TEST_DIR/err")"
	done
	run -0 husk list -q
	[ -z "$output" ] || fail "containers left: $output"
	left="$(systemctl list-units --all --plain --no-legend "husk-$base-*")"
	[ -z "$left" ] || fail "units left: $left"
	left="$(find /sys/fs/cgroup -maxdepth 3 -type d -name "husk-$base-*")"
	[ -z "$left" ] || fail "cgroups left: $left"
}

@test "systemd: after dbus is restarted and systemd re-executed, husk still runs containers (no hang)" {
	need_systemd
	local id
	set_args true
	systemctl restart dbus.service || skip "dbus.service cannot be restarted here"
	id="$(scope_id)"
	run -0 sd run --bundle "$BUNDLE" "$id" </dev/null
	systemctl daemon-reexec
	id="$(scope_id)"
	run -0 sd run --bundle "$BUNDLE" "$id" </dev/null
	[ "$(unit_state "husk-$id.scope")" = "not-found inactive" ] || fail "unit left: $(unit_state "husk-$id.scope")"
}

@test "systemd: a hung D-Bus (dbus-daemon stopped) fails create in bounded time naming D-Bus and the unit, leaves nothing, and works after SIGCONT" {
	need_systemd
	local id unit dbus
	# As root the cgroup library talks to systemd through the system bus
	# (dbus-daemon), and through /run/systemd/private only when the bus is
	# unreachable: a stopped dbus-daemon accepts the connection and never
	# answers. HUSK_DBUS_TIMEOUT shortens the 45 s bound for TCG.
	dbus="$(systemctl show -P MainPID dbus.service)"
	[ -n "$dbus" ] && [ "$dbus" != 0 ] || skip "no dbus-daemon running"
	set_args true
	id="$(scope_id)"
	unit="husk-$id.scope"
	echo "$dbus" >"$TEST_DIR/stopped-dbus"
	kill -STOP "$dbus"
	run ! --separate-stderr env HUSK_DBUS_TIMEOUT=4s timeout -k 5 150 \
		"$HUSK_BIN" --root "$HUSK_ROOT" --systemd-cgroup run --bundle "$BUNDLE" "$id" </dev/null
	kill -CONT "$dbus"
	rm "$TEST_DIR/stopped-dbus"
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		fail "husk hung on a stopped dbus-daemon: $stderr"
	fi
	echo "# stderr: $stderr" >&3
	assert_contains "$stderr" "systemd unit $unit" "no answer from systemd over D-Bus in 4s"
	assert_no_container "$id"
	[ ! -d "/sys/fs/cgroup/system.slice/$unit" ] || fail "scope cgroup left"
	# The same id works once dbus answers again, and leaves no unit.
	run -0 sd run --bundle "$BUNDLE" "$id" </dev/null
	[ "$(unit_state "$unit")" = "not-found inactive" ] || fail "unit left: $(unit_state "$unit")"
	[ ! -d "/sys/fs/cgroup/system.slice/$unit" ] || fail "scope cgroup left after the second run"
	# A bad timeout value is refused naming the variable.
	run ! --separate-stderr env HUSK_DBUS_TIMEOUT=soon "$HUSK_BIN" --root "$HUSK_ROOT" --systemd-cgroup run --bundle "$BUNDLE" "$(scope_id)" </dev/null
	assert_contains "$stderr" HUSK_DBUS_TIMEOUT soon
}

@test "systemd: an exec'd process is born in the container's scope, never moved there" {
	need_systemd
	local id unit
	id="$(scope_id)"
	unit="husk-$id.scope"
	set_args sleep 1000
	sd create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || fail "create: $(cat "$TEST_DIR/err")"
	run -0 sd start "$id"
	TRACEFS=/sys/kernel/tracing
	[ -e "$TRACEFS/events/cgroup/cgroup_attach_task/enable" ] || mount -t tracefs tracefs "$TRACEFS" 2>/dev/null || true
	[ -e "$TRACEFS/events/cgroup/cgroup_attach_task/enable" ] || skip "no tracefs with the cgroup_attach_task event"
	# Every move of a task between cgroups is traced; a process born in
	# its cgroup (clone3 CLONE_INTO_CGROUP) is never moved.
	echo >"$TRACEFS/trace"
	echo 1 >"$TRACEFS/events/cgroup/cgroup_attach_task/enable"
	run sd exec "$id" cat /proc/self/cgroup
	echo 0 >"$TRACEFS/events/cgroup/cgroup_attach_task/enable"
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$output" = "0::/" ] || fail "/proc/self/cgroup inside: $output"
	local moves
	moves="$(grep cgroup_attach_task "$TRACEFS/trace" | grep -F "$unit" || true)"
	[ -z "$moves" ] || fail "a process was moved into the scope (not born there): $moves"
	[ -z "$(grep cgroup_attach_task "$TRACEFS/trace" | grep -E 'comm=husk' || true)" ] || fail "husk moved a task: $(cat "$TRACEFS/trace")"
	run -0 sd delete --force "$id"
}

@test "systemd: a Type=notify unit running husk run -d becomes active only when the container says READY=1, with the container as its main pid" {
	local id unit pid sdnotify
	id="$(scope_id)"
	unit="husk-$id-notify.service"
	sdnotify="$(build_tool sdnotify)" || fail "cannot build tests/cmd/sdnotify"
	cp "$sdnotify" "$BUNDLE/rootfs/bin/sdnotify"
	set_args sh -c 'while [ ! -e /go ]; do sleep 0.1; done; sdnotify READY=1; exec sleep 1000'
	systemd-run --no-block --unit "$unit" -p Type=notify "$HUSK_BIN" --root "$HUSK_ROOT" run -d --bundle "$BUNDLE" "$id"
	wait_for_status "$id" running 60
	pid="$(container_pid "$id")"
	# The container runs but has not said READY=1: the unit is still starting.
	[ "$(unit_state "$unit")" = "loaded activating" ] || fail "before READY=1: $(unit_state "$unit")"
	touch "$BUNDLE/rootfs/go"
	for _ in $(seq 600); do [ "$(systemctl show -P ActiveState "$unit")" = activating ] || break; sleep 0.1; done
	[ "$(unit_state "$unit")" = "loaded active" ] || fail "after READY=1: $(unit_state "$unit"); $(journalctl -u "$unit" --no-pager | tail -5)"
	[ "$(systemctl show -P MainPID "$unit")" = "$pid" ] || fail "MainPID $(systemctl show -P MainPID "$unit"), container pid $pid"
	husk delete -f "$id"
	for _ in $(seq 300); do [ "$(systemctl show -P ActiveState "$unit")" = active ] || break; sleep 0.1; done
	[ "$(systemctl show -P ActiveState "$unit")" != active ] || fail "the unit outlived its container"
}
