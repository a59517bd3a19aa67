#!/usr/bin/env bats
# husk run by a user without root: runc's rootless spec, the state root in
# $XDG_RUNTIME_DIR, id maps written directly or through newuidmap, errors
# for what such a user cannot have, and podman --runtime husk as that user.
#
# setup_file creates a user (and its /etc/subuid and /etc/subgid ranges)
# for this file and removes it afterwards.

load helpers
load rootless-user

setup_file() {
	rl_user_create
	mkdir -p "$RL_XDG"
	chown "$RL_USER:$RL_USER" "$RL_XDG"
	chmod 0700 "$RL_XDG"
}

teardown_file() {
	rl_user_remove
}

setup() {
	setup_husk
	rl_bundle
}

teardown() {
	local left=0
	rl_teardown || left=1
	# Delegated cgroup parents a failed test left (after delete --force
	# above removed the containers' own).
	local d
	for d in $(cat "$TEST_DIR/deleg" 2>/dev/null); do
		find "$d" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
		rmdir "$d" 2>/dev/null || true
	done
	teardown_husk || return 1
	return "$left"
}

@test "rootless: spec --rootless is runc's rootless spec (namespaces, mappings, mounts, no resources)" {
	local d="$TEST_DIR/cmp"
	mkdir -p "$d/husk" "$d/runc"
	chown -R "$RL_USER" "$d"
	as_user sh -c "cd '$d/husk' && '$RL_BIN' spec --rootless" || fail "husk spec --rootless"
	as_user sh -c "cd '$d/runc' && /usr/sbin/runc spec --rootless" || fail "runc spec --rootless"
	local f
	for f in '.linux.namespaces' '.linux.uidMappings' '.linux.gidMappings' '.mounts' '.linux.resources'; do
		[ "$(jq -cS "$f" "$d/husk/config.json")" = "$(jq -cS "$f" "$d/runc/config.json")" ] ||
			fail "$f: husk $(jq -cS "$f" "$d/husk/config.json") runc $(jq -cS "$f" "$d/runc/config.json")"
	done
	[ "$(jq -c .linux.uidMappings "$d/husk/config.json")" = "[{\"containerID\":0,\"hostID\":$RL_UID,\"size\":1}]" ] ||
		fail "uidMappings: $(jq -c .linux.uidMappings "$d/husk/config.json")"
}

@test "rootless: spec --rootless then run: root inside, the user's uid on the host, state in XDG_RUNTIME_DIR" {
	local id
	id="$(new_id)"
	set_args sh -c 'id -u; id -g; cat /proc/self/uid_map'
	run -0 uhusk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = 0 ] || fail "uid inside: $output"
	[ "${lines[1]}" = 0 ] || fail "gid inside: $output"
	[ "$(echo "${lines[2]}" | xargs)" = "0 $RL_UID 1" ] || fail "uid_map: ${lines[2]}"

	id="$(new_id)"
	set_args sleep 100
	as_user "$RL_BIN" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
		fail "create: $(cat "$TEST_DIR/err")"
	[ -d "$RL_XDG/husk/$id" ] || fail "no state in $RL_XDG/husk/$id"
	uhusk start "$id" </dev/null 3>&- || fail "start"
	local pid
	pid="$(uhusk state "$id" | jq -r .pid)"
	grep -Eq "^Uid:\s+$RL_UID\s+$RL_UID\s" "/proc/$pid/status" || fail "host: $(grep -E '^(Uid|Gid):' "/proc/$pid/status")"
	grep -Eq "^Gid:\s+$RL_GID\s+$RL_GID\s" "/proc/$pid/status" || fail "host: $(grep -E '^(Uid|Gid):' "/proc/$pid/status")"
	run -0 uhusk kill "$id" KILL
	run -0 uhusk delete --force "$id"
	[ -z "$(ls -A "$RL_XDG/husk")" ] || fail "left in $RL_XDG/husk: $(ls -A "$RL_XDG/husk")"
}

@test "rootless: list shows only the user's containers; root's are neither visible nor killable" {
	local mine roots rpid
	mine="$(new_id)"
	roots="$(new_id)"
	set_args sleep 100
	as_user "$RL_BIN" create --bundle "$BUNDLE" "$mine" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
		fail "create as user: $(cat "$TEST_DIR/err")"

	# root's container, in root's default place and in the test's root.
	rm -f "$BUNDLE/config.json"
	husk spec --bundle "$BUNDLE"
	update_config '.process.terminal = false | .process.args = ["sleep", "100"]'
	run_bg "$roots"
	rpid="$(container_pid "$roots")"

	run -0 uhusk list -q
	[ "$output" = "$mine" ] || fail "user's list: $output"
	run -0 husk list -q
	[ "$output" = "$roots" ] || fail "root's list: $output"

	run ! uhusk --root "$HUSK_ROOT" kill "$roots" KILL
	pid_alive "$rpid" || fail "root's container killed by $RL_USER"
	run ! uhusk --root "$HUSK_ROOT" delete --force "$roots"
	pid_alive "$rpid" || fail "root's container deleted by $RL_USER"
	[ "$(container_status "$roots")" = running ] || fail "root's container: $(container_status "$roots")"
	run uhusk --root "$HUSK_ROOT" list -q
	! grep -qx -- "$roots" <<<"$output" || fail "root's container listed for $RL_USER"
}

@test "rootless: a multi-range mapping from /etc/subuid goes through newuidmap/newgidmap" {
	command -v newuidmap >/dev/null || skip "no newuidmap (apt-get install uidmap)"
	local id pid
	id="$(new_id)"
	update_config --argjson u "$RL_UID" --argjson g "$RL_GID" --argjson s "$RL_SUB_START" '
		.linux.uidMappings = [{"containerID": 0, "hostID": $u, "size": 1}, {"containerID": 1, "hostID": $s, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": $g, "size": 1}, {"containerID": 1, "hostID": $s, "size": 65536}]
		| .process.user = {"uid": 1000, "gid": 1000}'
	set_args sh -c 'id -u; cat /proc/self/uid_map | wc -l; sleep 100'
	as_user "$RL_BIN" create --bundle "$BUNDLE" "$id" </dev/null >"$TEST_DIR/out" 2>"$TEST_DIR/err" 3>&- ||
		fail "create: $(cat "$TEST_DIR/err")"
	uhusk start "$id" </dev/null 3>&- || fail "start"
	pid="$(uhusk state "$id" | jq -r .pid)"
	# uid 1000 inside is subordinate id START+999 on the host.
	grep -Eq "^Uid:\s+$((RL_SUB_START + 999))\s" "/proc/$pid/status" || fail "host: $(grep -E '^Uid:' "/proc/$pid/status")"
	grep -Eq "^Gid:\s+$((RL_SUB_START + 999))\s" "/proc/$pid/status" || fail "host: $(grep -E '^Gid:' "/proc/$pid/status")"
	[ "$(wc -l <"/proc/$pid/uid_map")" = 2 ] || fail "uid_map: $(cat "/proc/$pid/uid_map")"
	run -0 uhusk delete --force "$id"
}

@test "rootless: a mapping beyond the user's subuid range is refused, naming the field; nothing left" {
	local id
	id="$(new_id)"
	update_config --argjson u "$RL_UID" --argjson s "$RL_SUB_START" '
		.linux.uidMappings = [{"containerID": 0, "hostID": $u, "size": 1}, {"containerID": 1, "hostID": $s, "size": 65537}]'
	set_args true
	run ! uhusk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.uidMappings[1]" "hostID $RL_SUB_START size 65537" "/etc/subuid"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"
	# A zombie of the test before may still wait for its reaper: give it time.
	local i
	for i in $(seq 50); do
		[ -n "$(pgrep -u "$RL_USER")" ] || break
		sleep 0.1
	done
	[ -z "$(pgrep -u "$RL_USER")" ] || fail "processes of $RL_USER left: $(pgrep -a -u "$RL_USER")"
}

@test "rootless: overlapping mappings are refused, naming the field; nothing left" {
	local id
	id="$(new_id)"
	update_config --argjson g "$RL_GID" --argjson s "$RL_SUB_START" '
		.linux.gidMappings = [{"containerID": 0, "hostID": $g, "size": 1}, {"containerID": 0, "hostID": $s, "size": 10}]'
	set_args true
	run ! uhusk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.gidMappings[1]" "overlaps linux.gidMappings[0]"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"
}

@test "rootless: a device node the host lacks is refused, naming linux.devices" {
	local id
	id="$(new_id)"
	update_config '.linux.devices = [{"path": "/dev/husk-nonexistent", "type": "c", "major": 10, "minor": 200}]'
	set_args true
	run ! uhusk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.devices[0]" "/dev/husk-nonexistent" "rootless"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"
}

@test "rootless: a host device is bound into the container, not made" {
	local id
	id="$(new_id)"
	update_config '.linux.devices = [{"path": "/dev/full", "type": "c", "major": 1, "minor": 7}]'
	set_args sh -c 'stat -c "%t:%T" /dev/full; echo x >/dev/full || echo full'
	run -0 uhusk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = "1:7" ] || fail "/dev/full: $output"
	assert_contains "$output" full
}

@test "rootless: a cgroup limit with no writable cgroup is refused, naming the field" {
	[ -w /sys/fs/cgroup ] || true
	local id
	id="$(new_id)"
	update_config '.linux.resources = {"memory": {"limit": 67108864}}'
	set_args true
	run ! uhusk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.resources.memory.limit" "rootless"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"
}

@test "rootless: without writable cgroups the container runs and says why it has none (--debug)" {
	local id
	id="$(new_id)"
	set_args true
	run -0 uhusk --debug run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "no cgroups of its own"
}

@test "rootless: --rootless takes auto, true or false; anything else is refused" {
	local id
	id="$(new_id)"
	set_args true
	run -0 uhusk --rootless true run --bundle "$BUNDLE" "$id" </dev/null
	run -0 uhusk --rootless auto run --bundle "$BUNDLE" "$id" </dev/null
	run ! uhusk --rootless maybe run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" '--rootless' 'maybe'
	# false: the user's cgroups are not skipped, so it cannot make them.
	run ! uhusk --rootless false run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" cgroup
}

@test "rootless: --systemd-cgroup where the user has no systemd of its own fails naming the reason; nothing left" {
	[ ! -S "$RL_XDG/bus" ] || skip "$RL_USER has a session bus ($RL_XDG/bus): tests/vm/suites/rootless-v2.bats tests that case"
	local id
	id="$(new_id)"
	set_args true
	run ! uhusk --systemd-cgroup run --bundle "$BUNDLE" "$id" </dev/null
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line: $output"
	if [ -d /run/systemd/system ]; then
		assert_contains "$output" "--systemd-cgroup" "D-Bus session bus" "$RL_XDG/bus does not exist"
	else
		assert_contains "$output" "--systemd-cgroup" "systemd is not running"
	fi
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"
}

@test "rootless: husk init runs from a sealed copy the container cannot write (CVE-2019-5736)" {
	local id pid exe
	id="$(new_id)"
	set_args true
	as_user "$RL_BIN" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
		fail "create: $(cat "$TEST_DIR/err")"
	pid="$(uhusk state "$id" | jq -r .pid)"
	exe="$(readlink "/proc/$pid/exe")"
	[[ "$exe" == /memfd:* ]] || fail "husk init runs from $exe"
	run ! as_user sh -c "echo x >>/proc/$pid/exe"
	run ! sh -c "echo x >>/proc/$pid/exe"
	cmp -s "/proc/$pid/exe" "$RL_BIN" || fail "the copy differs from $RL_BIN"
}

# podman_user ARGS...: podman as the test user with private storage under
# its home, the cgroupfs manager (no systemd user session here) and husk.
podman_user() {
	as_user env CONTAINERS_STORAGE_CONF="$RL_HOME/storage.conf" \
		XDG_CONFIG_HOME="$RL_HOME/.config" XDG_DATA_HOME="$RL_HOME/.local/share" \
		timeout -k 5 180 podman --runtime "$RL_BIN" --cgroup-manager cgroupfs --events-backend file "$@"
}

@test "rootless: podman as the user with --runtime husk: run, exec, stop, rm" {
	command -v podman >/dev/null || skip "no podman"
	command -v newuidmap >/dev/null || skip "no newuidmap (apt-get install uidmap)"
	cat >"$RL_HOME/storage.conf" <<-EOS
		[storage]
		driver = "vfs"
		runroot = "$RL_XDG/containers"
		graphroot = "$RL_HOME/storage"
	EOS
	chown "$RL_USER" "$RL_HOME/storage.conf"
	tar -C "$BUNDLE/rootfs" -c . >"$TEST_DIR/busybox.tar"
	chmod 0644 "$TEST_DIR/busybox.tar"
	run -0 podman_user import "$TEST_DIR/busybox.tar" localhost/husk-busybox

	run -0 podman_user run --rm --network none localhost/husk-busybox sh -c 'id -u; cat /proc/self/uid_map'
	[ "${lines[0]}" = 0 ] || fail "podman run: $output"
	# podman's user namespace maps root to the user, the rest to its subuids.
	assert_contains "$output" "$RL_UID" "$RL_SUB_START"

	run -0 podman_user run -d --name husk-rl --network none localhost/husk-busybox sleep 1000
	run -0 podman_user exec husk-rl sh -c 'echo exec-ok; id -u'
	[ "${lines[0]}" = exec-ok ] || fail "podman exec: $output"
	run -0 podman_user ps --format '{{.Names}} {{.Status}}'
	assert_contains "$output" "husk-rl Up"
	run -0 podman_user stop -t 1 husk-rl
	run -0 podman_user rm husk-rl
	run -0 podman_user ps -a -q
	[ -z "$output" ] || fail "podman ps -a after rm: $output"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left in $RL_XDG/husk: $(ls -A "$RL_XDG/husk")"
	podman_user system reset --force >/dev/null 2>&1 || true
}

@test "rootless: a new network namespace has only loopback (network none)" {
	local id
	id="$(new_id)"
	set_ns network
	# /proc/net/dev is the netns's own (the rootless /sys is the host's).
	set_args sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1'
	run -0 uhusk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$(echo $output)" = lo ] || fail "interfaces: $output"
}

@test "rootless: user and network namespaces of the user's own joined by path" {
	local id upid
	id="$(new_id)"
	as_user unshare -Urn sleep 1000 </dev/null >/dev/null 2>&1 3>&- &
	track_bg $!
	for _ in $(seq 100); do
		upid="$(pgrep -u "$RL_USER" -x sleep | head -1)"
		[ -n "$upid" ] && [ "$(ns_link "$upid" net)" != "$(ns_link self net)" ] && break
		sleep 0.05
	done
	[ -n "$upid" ] || fail "no unshare'd sleep of $RL_USER"
	set_ns user "/proc/$upid/ns/user"
	set_ns network "/proc/$upid/ns/net"
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)'
	set_args sh -c 'readlink /proc/self/ns/user; readlink /proc/self/ns/net; id -u'
	run -0 uhusk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = "$(ns_link "$upid" user)" ] || fail "user: ${lines[0]} != $(ns_link "$upid" user)"
	[ "${lines[1]}" = "$(ns_link "$upid" net)" ] || fail "net: ${lines[1]} != $(ns_link "$upid" net)"
	[ "${lines[2]}" = 0 ] || fail "uid inside: ${lines[2]}"
	kill -9 "$upid"
}

@test "rootless: exec into the user's container joins its namespaces; without cgroups ps and pause say why they cannot" {
	local id
	id="$(new_id)"
	set_args sleep 100
	as_user "$RL_BIN" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
		fail "create: $(cat "$TEST_DIR/err")"
	uhusk start "$id" </dev/null 3>&- || fail "start"
	run -0 uhusk exec "$id" sh -c 'id -u; echo $$; readlink /proc/1/exe'
	[ "${lines[0]}" = 0 ] || fail "exec uid: $output"
	[ "${lines[1]}" != 1 ] || fail "exec is pid 1: $output"
	[ "${lines[2]}" = /bin/busybox ] || fail "pid 1 of the exec's pid ns: $output"
	# No writable cgroup here (v1 root-owned): ps and pause fail with one
	# line naming the reason.
	local op
	for op in ps pause; do
		run ! uhusk "$op" "$id"
		[ "${#lines[@]}" -eq 1 ] || fail "$op: more than one line: $output"
		assert_contains "$output" "container $id has no cgroups" "created rootless" "no cgroup was writable"
	done
	[ "$(uhusk state "$id" | jq -r .status)" = running ] || fail "status after a refused pause: $(uhusk state "$id")"
	run -0 uhusk kill --all "$id" KILL
	run -0 uhusk delete --force "$id"
}

@test "rootless: a spec without a user namespace is refused, naming the field" {
	local id
	id="$(new_id)"
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "user")] | del(.linux.uidMappings) | del(.linux.gidMappings)'
	set_args true
	run ! uhusk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.namespaces" "\"user\" namespace"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"
}

@test "rootless: cgroups delegated to the user (chowned by root) are used: limits applied, ps and pause work, removed on delete" {
	[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] ||
		skip "chowned cgroup v1 hierarchies: a pure v2 host has none (v2: the next test and tests/vm/suites/rootless-v2.bats)"
	local id pid parent="huskrl-deleg-$$-$RANDOM" d hier=()
	id="$(new_id)"
	# Every hierarchy husk would use: the v1 controllers and the unified one.
	for d in /sys/fs/cgroup/*/; do
		d="${d%/}"
		[ -e "$d/cgroup.procs" ] || continue
		mkdir "$d/$parent"
		hier+=("$d/$parent")
		if [ -e "$d/cpuset.cpus" ]; then
			cat "$d/cpuset.cpus" >"$d/$parent/cpuset.cpus"
			cat "$d/cpuset.mems" >"$d/$parent/cpuset.mems"
		fi
		chown -R "$RL_USER" "$d/$parent"
	done
	echo "${hier[*]}" >"$TEST_DIR/deleg"
	update_config --arg p "/$parent/$id" '.linux.cgroupsPath = $p | .linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 50}}'
	set_args sleep 100
	as_user "$RL_BIN" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || {
		rmdir "${hier[@]}" 2>/dev/null
		fail "create: $(cat "$TEST_DIR/err")"
	}
	pid="$(uhusk state "$id" | jq -r .pid)"
	local mem=/sys/fs/cgroup/memory/$parent/$id
	grep -qx "$pid" "$mem/cgroup.procs" || fail "init $pid not in $mem: $(cat "$mem/cgroup.procs")"
	[ "$(cat "$mem/memory.limit_in_bytes")" = 67108864 ] || fail "memory limit: $(cat "$mem/memory.limit_in_bytes")"
	[ "$(cat "/sys/fs/cgroup/pids/$parent/$id/pids.max")" = 50 ] || fail "pids.max: $(cat "/sys/fs/cgroup/pids/$parent/$id/pids.max")"
	# With cgroups of its own, ps lists it and pause freezes it.
	run -0 uhusk ps --format json "$id"
	[ "$output" = "[$pid]" ] || fail "ps: $output"
	run -0 uhusk pause "$id"
	[ "$(uhusk state "$id" | jq -r .status)" = paused ] || fail "after pause: $(uhusk state "$id")"
	grep -q FROZEN "/sys/fs/cgroup/freezer/$parent/$id/freezer.state" ||
		fail "freezer.state: $(cat "/sys/fs/cgroup/freezer/$parent/$id/freezer.state")"
	run -0 uhusk resume "$id"
	[ "$(uhusk state "$id" | jq -r .status)" = created ] || fail "after resume: $(uhusk state "$id")"
	run -0 uhusk delete --force "$id"
	[ ! -e "$mem" ] || fail "$mem left after delete"
	rmdir "${hier[@]}" || fail "a delegated parent is not empty"
}

@test "rootless: cgroup v2 with a delegated subtree: the container's cgroup is made in it, with its limits" {
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] ||
		skip "needs a pure cgroup v2 host (/sys/fs/cgroup here is $(stat -fc %T /sys/fs/cgroup)); the VM lane has one"
	grep -qw pids /sys/fs/cgroup/cgroup.subtree_control || skip "the root cgroup does not enable pids for its children"
	local top="/sys/fs/cgroup/huskrl-deleg-$$-$RANDOM" id pid
	id="$(new_id)"
	mkdir "$top" "$top/caller"
	echo "$top" >"$TEST_DIR/deleg"
	# Delegated as systemd's Delegate=yes does: the directory and the files
	# that move processes and enable controllers belong to the user.
	echo +pids >"$top/cgroup.subtree_control"
	chown "$RL_USER" "$top" "$top/cgroup.procs" "$top/cgroup.subtree_control" "$top/cgroup.threads" \
		"$top/caller" "$top/caller/cgroup.procs"
	update_config '.linux.resources = {"pids": {"limit": 50}}'
	set_args sleep 100
	# The user's husk starts from a process inside the delegated subtree.
	(
		echo "$BASHPID" >"$top/caller/cgroup.procs"
		as_user "$RL_BIN" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&-
	) || fail "create: $(cat "$TEST_DIR/err")"
	pid="$(uhusk state "$id" | jq -r .pid)"
	local cg="$top/husk/$id"
	grep -qx "$pid" "$cg/cgroup.procs" || fail "init $pid is not in $cg: $(cat "/proc/$pid/cgroup")"
	[ "$(cat "$cg/pids.max")" = 50 ] || fail "pids.max: $(cat "$cg/pids.max")"
	run -0 uhusk delete --force "$id"
	[ ! -e "$cg" ] || fail "$cg left after delete"
}
