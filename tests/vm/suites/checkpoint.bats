#!/usr/bin/env bats
# husk checkpoint and husk restore with CRIU, in both VM setups (CRIU does
# not run on the CI host's kernel: tests/integration/checkpoint.bats holds
# the refusals, which do). A counter container proves a restore resumes
# the process where the checkpoint left it, not from the start: it
# appends 1, 2, 3, … to a file, so the line after the last one written
# before a checkpoint must be the next number. Then --leave-running, the
# pre-dump chain, an external netns, a tty, nested binds, a new cgroup,
# the systemd driver's scope (setup a), runc spec's default bundle. The teardown finds anything left
# (state, mounts, processes, cgroups named after the ids). Setup a runs only
# the systemd driver's test and runc spec's default bundle: the others use
# the cgroupfs driver, the same with or without systemd, and run in b.
#
# CRIU's first checkpoint drops nsdelegate from the cgroup2 mount (CRIU
# issue 3029): the teardown puts it back (nsdelegate_restore).

load ../../integration/helpers

setup_file() {
	nsdelegate_save
}

setup() {
	command -v criu >/dev/null || skip "no criu binary in this guest"
	case "$BATS_TEST_DESCRIPTION" in
	"checkpoint: systemd"*)
		[ "${HUSK_VM_SETUP:-}" = a ] || skip "needs systemd as PID 1 (VM setup a)"
		;;
	"checkpoint: runc spec's default bundle"*) ;;
	*)
		# The cgroupfs driver on pure v2 is the same under systemd: setup b
		# proves it, a the systemd driver's scope (the lane's time budget).
		[ "${HUSK_VM_SETUP:-}" != a ] || skip "the cgroupfs driver's checkpoint runs in setup b"
		;;
	esac
	setup_husk
	update_config '.root.readonly = false'
	set_args sh -c 'i=0; while :; do i=$((i+1)); echo $i >>/count; sleep 0.2; done'
	COUNT="$BUNDLE/rootfs/count"
}

teardown() {
	local rc=0
	teardown_husk || rc=$?
	nsdelegate_restore
	return $rc
}

# lines: how many numbers the counter wrote.
lines() {
	wc -l <"$COUNT" 2>/dev/null || echo 0
}

# wait_lines N: the counter wrote more than N numbers (within 60 s).
wait_lines() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(lines)" -gt "$1" ] && return 0
		sleep 0.1
	done
	fail "the counter did not get past $1 lines: $(tail -n2 "$COUNT" 2>/dev/null)"
}

# assert_resumed LAST: after LAST lines, the counter wrote LAST+1, so the
# restored process went on, and did not start again at 1.
assert_resumed() {
	wait_lines "$1"
	local next
	next="$(sed -n "$(($1 + 1))p" "$COUNT")"
	[ "$next" = "$(($1 + 1))" ] || fail "line $(($1 + 1)) is '$next', want $(($1 + 1)): not resumed"
}

# start_counter ID [run flags]: the counter, detached, stdio /dev/null;
# returns once it counts.
start_counter() {
	local id="$1"
	shift
	# Not a file of the host's: CRIU cannot dump an fd on a mount outside
	# the container.
	husk run -d --bundle "$BUNDLE" "$@" "$id" </dev/null >/dev/null 2>&1 3>&- || fail "run $id failed"
	wait_lines 2
}

# ck ID [flags]: checkpoint into TEST_DIR/img unless flags say otherwise.
ck() {
	local id="$1"
	shift
	husk checkpoint --image-path "$TEST_DIR/img" "$@" "$id" 3>&-
}

# rs ID [flags]: restore detached from TEST_DIR/img, stdio /dev/null.
rs() {
	local id="$1"
	shift
	husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/img" "$@" "$id" \
		</dev/null >/dev/null 2>"$TEST_DIR/restore.err" 3>&- || {
		cat "$TEST_DIR/restore.err" >&2
		grep -h Error "$TEST_DIR"/img*/restore.log >&2 || true
		return 1
	}
}

@test "checkpoint: a counter resumes after restore; exec joins its time namespace; a second cycle; kill and delete after restore" {
	local id last pid
	id="$(new_id)"
	start_counter "$id"
	ck "$id"
	assert_no_container "$id" # runc's checkpoint deletes the container
	last="$(lines)"
	rs "$id"
	[ "$(container_status "$id")" = running ]
	assert_resumed "$last"
	pid="$(container_pid "$id")"
	# CRIU restored it into a time namespace of its own: exec joins it.
	[ "$(ns_link "$pid" time)" != "$(ns_link $$ time)" ]
	run husk exec "$id" readlink /proc/self/ns/time
	[ "$status" -eq 0 ] && [ "$output" = "$(ns_link "$pid" time)" ] ||
		fail "exec's time namespace '$output', init's $(ns_link "$pid" time)"
	# A second cycle, after that exec.
	rm -rf "$TEST_DIR/img"
	ck "$id"
	last="$(lines)"
	rs "$id"
	assert_resumed "$last"
	pid="$(container_pid "$id")"
	husk kill "$id" KILL
	wait_for_status "$id" stopped 30
	husk delete "$id"
	assert_no_container "$id"
	assert_pid_gone "$pid"
}

@test "checkpoint: --leave-running keeps the container; a foreground restore starts from the snapshot and exits with its status; org.criu.config is read" {
	local id before after next rpid rc=0
	# CRIU's settings from the annotation's file override husk's.
	echo "log-file ck-custom.log" >"$TEST_DIR/criu.conf"
	update_config --arg f "$TEST_DIR/criu.conf" '.annotations["org.criu.config"] = $f'
	id="$(new_id)"
	start_counter "$id"
	before="$(lines)"
	ck "$id" --leave-running
	[ "$(container_status "$id")" = running ]
	[ -s "$TEST_DIR/img/ck-custom.log" ] && [ ! -e "$TEST_DIR/img/dump.log" ] ||
		fail "org.criu.config not read: $(ls "$TEST_DIR/img")"
	wait_lines "$((before + 3))"
	husk delete --force "$id"
	after="$(lines)"
	# In the foreground, as run: restore waits, and exits with the status.
	husk restore --bundle "$BUNDLE" --image-path "$TEST_DIR/img" "$id" </dev/null >/dev/null 2>&1 3>&- &
	rpid=$!
	track_bg "$rpid"
	wait_lines "$after"
	next="$(sed -n "$((after + 1))p" "$COUNT")"
	# From the snapshot: past what was written before it, not from 1, and
	# not after what the first container wrote.
	[ "$next" -gt "$before" ] && [ "$next" -le "$after" ] ||
		fail "restored counter wrote $next; snapshot after $before lines, $after written in all"
	[ "$(container_status "$id")" = running ]
	husk kill "$id" KILL
	wait "$rpid" || rc=$?
	[ "$rc" -eq 137 ] || fail "restore exited $rc, want 137 (SIGKILL)"
	assert_no_container "$id"
}

@test "checkpoint: --pre-dump then a dump with --parent-path restores; an absolute --parent-path is refused" {
	local id last
	id="$(new_id)"
	start_counter "$id"
	husk checkpoint --pre-dump --image-path "$TEST_DIR/img/pre" "$id" 3>&-
	[ "$(container_status "$id")" = running ]
	run ! --separate-stderr husk checkpoint --image-path "$TEST_DIR/img/final" --parent-path "$TEST_DIR/img/pre" "$id"
	assert_contains "$stderr" "--parent-path $TEST_DIR/img/pre: must be relative"
	[ "$(container_status "$id")" = running ]
	husk checkpoint --image-path "$TEST_DIR/img/final" --parent-path ../pre "$id" 3>&-
	last="$(lines)"
	[ -L "$TEST_DIR/img/final/parent" ] || fail "the dump names no parent"
	husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/img/final" "$id" </dev/null >/dev/null 2>&1 3>&-
	assert_resumed "$last"
}

@test "checkpoint: an external network namespace (by path) is the one the restored container is in" {
	local id ns ino last pid
	ns="$(new_netns)"
	set_ns network "/var/run/netns/$ns"
	ino="$(stat -L -c %i "/var/run/netns/$ns")"
	id="$(new_id)"
	start_counter "$id"
	ck "$id"
	last="$(lines)"
	rs "$id"
	assert_resumed "$last"
	pid="$(container_pid "$id")"
	[ "$(ns_link "$pid" net)" = "net:[$ino]" ] || fail "netns $(ns_link "$pid" net), want net:[$ino]"
}

@test "checkpoint: a tty container of runc spec's bundle gets a new pty through --console-socket" {
	local id before
	runc_spec_config # a terminal, a read-only root, runc's masks
	set_args sh -c 'i=0; while :; do i=$((i+1)); echo tick$i; sleep 0.3; done'
	SOCK="$TEST_DIR/tty.sock"
	start_recvtty -no-stdin
	id="$(new_id)"
	husk run -d --console-socket "$SOCK" --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&-
	until grep -q tick3 "$TEST_DIR/tty.out"; do sleep 0.1; done
	ck "$id"
	before="$(grep -o 'tick[0-9]*' "$TEST_DIR/tty.out" | tail -n1 | tr -dc 0-9)"
	SOCK="$TEST_DIR/tty2.sock"
	mv "$TEST_DIR/tty.out" "$TEST_DIR/tty1.out"
	start_recvtty -no-stdin
	run ! --separate-stderr husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/img" "$id"
	assert_contains "$stderr" "--console-socket"
	assert_no_container "$id"
	rs "$id" --console-socket "$SOCK"
	until grep -q "tick$((before + 2))" "$TEST_DIR/tty.out"; do sleep 0.1; done
	! grep -qx 'tick1' <(tr -d '\r' <"$TEST_DIR/tty.out") || fail "restarted: the new pty shows tick1"
}

@test "checkpoint: bind mounts, one nested in another, come back; a missing nested mount point is made again" {
	local id last
	mkdir -p "$TEST_DIR/data/inner" "$TEST_DIR/inner"
	update_config --arg d "$TEST_DIR/data" --arg i "$TEST_DIR/inner" \
		'.mounts += [{destination: "/data", type: "bind", source: $d, options: ["rbind"]},
		             {destination: "/data/inner", type: "bind", source: $i, options: ["bind"]}]'
	set_args sh -c 'i=0; while :; do i=$((i+1)); echo $i >>/data/inner/count; sleep 0.2; done'
	COUNT="$TEST_DIR/inner/count"
	id="$(new_id)"
	start_counter "$id"
	ck "$id"
	rmdir "$TEST_DIR/data/inner"
	last="$(lines)"
	rs "$id"
	assert_resumed "$last"
	[ -d "$TEST_DIR/data/inner" ] || fail "restore did not make the mount point /data/inner"
}

@test "checkpoint: --manage-cgroups-mode ignore and a new cgroupsPath restore into the new cgroup" {
	local id last pid
	id="$(new_id)"
	update_config --arg p "/$id" '.linux.cgroupsPath = $p'
	start_counter "$id"
	ck "$id" --manage-cgroups-mode ignore
	[ ! -d "/sys/fs/cgroup/$id" ] || fail "the old cgroup /sys/fs/cgroup/$id is left"
	update_config --arg p "/$id-moved" '.linux.cgroupsPath = $p'
	last="$(lines)"
	rs "$id" --manage-cgroups-mode ignore
	assert_resumed "$last"
	pid="$(container_pid "$id")"
	grep -qx "0::/$id-moved" "/proc/$pid/cgroup" || fail "init in $(cat "/proc/$pid/cgroup"), want /$id-moved"
	[ ! -d "/sys/fs/cgroup/$id" ]
	husk delete --force "$id"
	[ ! -d "/sys/fs/cgroup/$id-moved" ] || fail "cgroup /$id-moved left after delete"
}

@test "checkpoint: systemd driver: the restored container is back in its scope; delete stops it" {
	local id last pid unit
	id="$(new_id)"
	unit="husk-$id.scope"
	update_config --arg p "system.slice:husk:$id" '.linux.cgroupsPath = $p'
	husk --systemd-cgroup run -d --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&-
	wait_lines 2
	husk --systemd-cgroup checkpoint --image-path "$TEST_DIR/img" "$id" 3>&-
	[ "$(systemctl show -P ActiveState "$unit")" != active ] || fail "$unit still active after checkpoint"
	last="$(lines)"
	husk --systemd-cgroup restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/img" "$id" </dev/null >/dev/null 2>&1 3>&-
	assert_resumed "$last"
	pid="$(container_pid "$id")"
	[ "$(systemctl show -P ActiveState "$unit")" = active ] || fail "$unit: $(systemctl show -P ActiveState "$unit")"
	grep -q "/system.slice/$unit\$" "/proc/$pid/cgroup" || fail "init in $(cat "/proc/$pid/cgroup"), want $unit"
	husk --systemd-cgroup delete --force "$id"
	[ "$(systemctl show -P ActiveState "$unit")" != active ] || fail "$unit still active after delete"
	[ ! -d "/sys/fs/cgroup/system.slice/$unit" ] || fail "scope cgroup left"
}

@test "checkpoint: runc spec's default bundle (its /sys/fs/cgroup mount included) checkpoints, restores, and execs into the restored container" {
	local id pid n
	runc_spec_config # unmodified but for the terminal and the args
	update_config '.process.terminal = false'
	# The root is read-only: the counter writes to the spec's /dev/shm, a
	# tmpfs whose content CRIU dumps.
	set_args sh -c 'i=0; while :; do i=$((i+1)); echo $i >>/dev/shm/count; sleep 0.2; done'
	id="$(new_id)"
	husk run -d --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- || fail "run $id failed"
	pid="$(container_pid "$id")"
	COUNT="/proc/$pid/root/dev/shm/count"
	wait_lines 2
	ck "$id" || { grep -h Error "$TEST_DIR"/img/dump.log >&2; fail "checkpoint of the default bundle failed"; }
	assert_no_container "$id"
	rs "$id"
	pid="$(container_pid "$id")"
	COUNT="/proc/$pid/root/dev/shm/count"
	n="$(lines)"
	wait_lines "$((n + 2))"
	# Resumed, not started again: the numbers go on unbroken.
	awk 'NR != $1 { exit 1 }' "$COUNT" || fail "the count restarted: $(tr '\n' ' ' <"$COUNT")"
	run -0 --separate-stderr husk exec "$id" sh -c 'wc -l </dev/shm/count'
	[ "$output" -gt "$n" ] || fail "exec sees $output lines"
	husk delete -f "$id"
	assert_no_container "$id"
}

@test "checkpoint: a container made under NOTIFY_SOCKET has the relay's /run/notify bind again after a restore under NOTIFY_SOCKET, as runc" {
	local id last pid
	id="$(new_id)"
	# Made under a service manager's socket: create binds the relay's
	# directory (in the state dir) at /run/notify. Started without one, so
	# nothing waits for READY=1.
	NOTIFY_SOCKET="$TEST_DIR/host.sock" husk create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- || fail "create $id failed"
	NOTIFY_SOCKET= husk start "$id" 3>&-
	wait_lines 2
	pid="$(container_pid "$id")"
	grep -q " /run/notify ro,nosuid,nodev,noexec" "/proc/$pid/mountinfo" || fail "before the checkpoint: $(grep notify "/proc/$pid/mountinfo")"
	# runc's restore under NOTIFY_SOCKET: the same bind, of the new state
	# dir's notify directory; nothing is relayed (it said READY before).
	# Twice: the restored state keeps the bind for the next checkpoint.
	local cycle
	for cycle in 1 2; do
		rm -rf "$TEST_DIR/img"
		ck "$id"
		assert_no_container "$id"
		last="$(lines)"
		NOTIFY_SOCKET="$TEST_DIR/host.sock" rs "$id"
		assert_resumed "$last"
		pid="$(container_pid "$id")"
		grep -q " /run/notify ro,nosuid,nodev,noexec" "/proc/$pid/mountinfo" || fail "after restore $cycle: $(grep notify "/proc/$pid/mountinfo")"
		[ "$(stat -c %d:%i "/proc/$pid/root/run/notify")" = "$(stat -c %d:%i "$HUSK_ROOT/$id/notify")" ] ||
			fail "after restore $cycle: /run/notify is not the state dir's notify directory"
	done
	husk delete -f "$id"
	assert_no_container "$id"
}
