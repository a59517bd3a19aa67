#!/usr/bin/env bats
# User namespaces with other namespaces: the join order nsexec needs when
# a joined user namespace does not own the other joined namespaces, and a
# new time namespace made inside a new user namespace.

load helpers

# map_userns: the container gets a new user namespace, 0 -> host 100000.
map_userns() {
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
}

@test "external user ns + a host-owned netns joined by path: the container starts in both" {
	requires_userns
	local a b pid ns
	a="$(new_id)"
	b="$(new_id)"
	ns="$(new_netns)"
	map_userns
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"

	# The netns belongs to the host's user ns, not to the one joined: it
	# can only be joined before entering the container's user ns.
	set_ns user "/proc/$pid/ns/user"
	set_ns network "/var/run/netns/$ns"
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)'
	set_args sh -c 'readlink /proc/self/ns/user; readlink /proc/self/ns/net; id -u'
	run -0 husk run --bundle "$BUNDLE" "$b" </dev/null
	[ "${lines[0]}" = "$(ns_link "$pid" user)" ] || fail "user: ${lines[0]} != $(ns_link "$pid" user)"
	[ "${lines[1]}" = "$(ip netns exec "$ns" readlink /proc/self/ns/net)" ] ||
		fail "net: ${lines[1]} is not the netns $ns"
	[ "${lines[2]}" = 0 ] || fail "uid inside: ${lines[2]}"
}

@test "external user ns + the host's uts and ipc (of the test shell) joined by path, new pid and mount" {
	requires_userns
	local a b pid
	a="$(new_id)"
	b="$(new_id)"
	map_userns
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"

	set_ns user "/proc/$pid/ns/user"
	set_ns uts "/proc/$$/ns/uts"
	set_ns ipc "/proc/$$/ns/ipc"
	# mqueue can only be mounted by the ipc namespace's owner, the host's
	# root; this host has no /dev/mqueue to bind instead.
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings) | del(.hostname)
		| .mounts = [.mounts[] | select(.destination != "/dev/mqueue")]'
	set_args sh -c 'readlink /proc/self/ns/uts; readlink /proc/self/ns/ipc; echo $$'
	run -0 husk run --bundle "$BUNDLE" "$b" </dev/null
	[ "${lines[0]}" = "$(ns_link $$ uts)" ] || fail "uts: ${lines[0]} != $(ns_link $$ uts)"
	[ "${lines[1]}" = "$(ns_link $$ ipc)" ] || fail "ipc: ${lines[1]} != $(ns_link $$ ipc)"
	[ "${lines[2]}" = 1 ] || fail "new pid ns, yet pid ${lines[2]}"
}

@test "new time ns + new user ns: linux.timeOffsets are applied" {
	requires_userns
	local id
	id="$(new_id)"
	map_userns
	set_ns time
	update_config '.linux.timeOffsets = {"monotonic": {"secs": 864000}, "boottime": {"secs": 864000}}'
	set_args sh -c 'readlink /proc/self/ns/time; cut -d. -f1 /proc/uptime; id -u'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" != "$(ns_link self time)" ] || fail "same time ns as the host: ${lines[0]}"
	local host
	host="$(cut -d. -f1 /proc/uptime)"
	[ "${lines[1]}" -ge $((host + 864000 - 5)) ] || fail "uptime inside ${lines[1]}, host $host: offset not applied"
	[ "${lines[2]}" = 0 ] || fail "uid inside: ${lines[2]}"
}

@test "new time ns inside a joined user ns: offsets applied" {
	requires_userns
	local a b pid
	a="$(new_id)"
	b="$(new_id)"
	map_userns
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"

	set_ns user "/proc/$pid/ns/user"
	set_ns time
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)
		| .linux.timeOffsets = {"boottime": {"secs": 86400}}'
	set_args sh -c 'cut -d. -f1 /proc/uptime'
	run -0 husk run --bundle "$BUNDLE" "$b" </dev/null
	local host
	host="$(cut -d. -f1 /proc/uptime)"
	[ "${lines[0]}" -ge $((host + 86400 - 5)) ] || fail "uptime inside ${lines[0]}, host $host: offset not applied"
}

@test "a user ns path that cannot be joined: the error names it, nothing left" {
	requires_userns
	local id
	id="$(new_id)"
	set_ns user /proc/self/ns/user
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)'
	set_args true
	run ! husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "user"
	assert_no_container "$id"
}

@test "--debug: nsexec's steps reach --log in json and in text; without --debug they do not" {
	requires_userns
	local id ns log="$TEST_DIR/log.json"
	ns="$(new_netns)"
	map_userns
	set_ns network "/var/run/netns/$ns"
	set_ns time
	update_config '.linux.timeOffsets = {"boottime": {"secs": 10}}'
	set_args true

	id="$(new_id)"
	run -0 husk --debug --log "$log" --log-format json run --bundle "$BUNDLE" "$id" </dev/null
	jq -e . "$log" >/dev/null || fail "--log is not JSON lines: $(cat "$log")"
	local want
	for want in "nsexec: joined net namespace /var/run/netns/$ns" "nsexec: made user namespace" \
		"nsexec: made mnt,uts,ipc,pid,time namespaces" "nsexec: time offsets set: boottime 10 0" "nsexec: forked init, pid"; do
		jq -r 'select(.level == "debug") | .msg' "$log" | grep -qF -- "$want" || fail "no debug record '$want' in: $(cat "$log")"
	done

	id="$(new_id)"
	run -0 husk --debug --log "$TEST_DIR/log.txt" --log-format text run --bundle "$BUNDLE" "$id" </dev/null
	grep -q 'level=debug msg="init: nsexec: made user namespace' "$TEST_DIR/log.txt" || fail "text log: $(cat "$TEST_DIR/log.txt")"

	id="$(new_id)"
	run -0 husk --log "$TEST_DIR/log.quiet" --log-format json run --bundle "$BUNDLE" "$id" </dev/null
	! grep -q nsexec "$TEST_DIR/log.quiet" 2>/dev/null || fail "nsexec lines without --debug: $(cat "$TEST_DIR/log.quiet")"
}
