#!/usr/bin/env bats
# Every namespace type, new and joined by path through nsexec's setns.

load helpers

@test "cgroup ns: new, the container sees its cgroups at /" {
	local id
	id="$(new_id)"
	set_ns cgroup
	set_args sh -c 'readlink /proc/self/ns/cgroup; cat /proc/self/cgroup'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" != "$(ns_link self cgroup)" ] || fail "same cgroup ns as the host: ${lines[0]}"
	local line
	for line in "${lines[@]:1}"; do
		[[ "$line" == *:/ ]] || fail "cgroup line not rooted at /: $line"
	done
}

@test "time ns: new, linux.timeOffsets shift the monotonic and boot clocks" {
	local id
	id="$(new_id)"
	set_ns time
	update_config '.linux.timeOffsets = {"monotonic": {"secs": 864000}, "boottime": {"secs": 864000}}'
	set_args sh -c 'readlink /proc/self/ns/time; cut -d. -f1 /proc/uptime'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" != "$(ns_link self time)" ] || fail "same time ns as the host: ${lines[0]}"
	local host
	host="$(cut -d. -f1 /proc/uptime)"
	[ "${lines[1]}" -ge $((host + 864000 - 5)) ] || fail "uptime inside ${lines[1]}, host $host: offset not applied"
}

@test "pid, net, ipc, uts, cgroup and time all joined by path from another container" {
	local a b pid t
	a="$(new_id)"
	b="$(new_id)"
	for t in pid network ipc uts cgroup time; do set_ns "$t"; done
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"

	set_ns pid "/proc/$pid/ns/pid"
	set_ns network "/proc/$pid/ns/net"
	set_ns ipc "/proc/$pid/ns/ipc"
	set_ns uts "/proc/$pid/ns/uts"
	set_ns cgroup "/proc/$pid/ns/cgroup"
	set_ns time "/proc/$pid/ns/time"
	update_config 'del(.hostname)'
	set_args sh -c 'for t in pid net ipc uts cgroup time; do readlink /proc/self/ns/$t; done; echo $$; ps -o comm | grep -c sleep'
	run -0 husk run --bundle "$BUNDLE" "$b" </dev/null
	local i=0
	for t in pid net ipc uts cgroup time; do
		[ "${lines[$i]}" = "$(ns_link "$pid" "$t")" ] || fail "$t: ${lines[$i]} != $(ns_link "$pid" "$t")"
		i=$((i + 1))
	done
	[ "${lines[6]}" != 1 ] || fail "joined pid ns, yet PID 1"
	[ "${lines[7]}" -ge 1 ] || fail "the first container's sleep is not visible: $output"
}

@test "user ns joined by path: the second container runs in the first one's mapping" {
	requires_userns
	local a b pid
	a="$(new_id)"
	b="$(new_id)"
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"

	set_ns user "/proc/$pid/ns/user"
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)'
	set_args sh -c 'readlink /proc/self/ns/user; cat /proc/self/uid_map; sleep 100'
	create_bg "$b"
	husk start "$b"
	local bpid
	bpid="$(container_pid "$b")"
	wait_for_status "$b" running
	sleep 0.2
	run cat "$TEST_DIR/$b.out"
	[ "${lines[0]}" = "$(ns_link "$pid" user)" ] || fail "user: ${lines[0]} != $(ns_link "$pid" user)"
	[[ "${lines[1]}" =~ ^\ *0\ +100000\ +65536$ ]] || fail "uid_map: ${lines[1]}"
	grep -Eq '^Uid:\s+100000\s' "/proc/$bpid/status" || fail "host uid of the second container: $(grep Uid "/proc/$bpid/status")"
}

@test "a joined path of the wrong namespace type is refused before anything starts" {
	local id
	id="$(new_id)"
	set_ns network /proc/self/ns/uts
	set_args true
	run ! husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" 'linux.namespaces'
	assert_contains "$output" 'is a uts namespace'
	assert_no_container "$id"
}
