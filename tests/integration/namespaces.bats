#!/usr/bin/env bats
# New namespaces, and namespaces joined by path.

load helpers

@test "pid ns: the container process is PID 1" {
	local id
	id="$(new_id)"
	set_ns pid
	set_args sh -c 'echo $$'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = 1 ] || fail "output: $output"
}

@test "pid ns: the container sees only its own processes" {
	local id
	id="$(new_id)"
	set_ns pid
	set_args sh -c 'ls -d /proc/[0-9]* | wc -l'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	# sh and ls (and possibly wc): a handful, not the host's hundreds.
	[ "$output" -le 4 ] || fail "saw $output processes"
}

@test "uts ns: hostname comes from the config" {
	local id
	id="$(new_id)"
	set_ns uts
	update_config '.hostname = "husk-uts-test"'
	set_args hostname
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = husk-uts-test ] || fail "output: $output"
	[ "$(hostname)" != husk-uts-test ] || fail "the host's hostname changed"
}

@test "new namespaces differ from the host's" {
	local id t
	id="$(new_id)"
	set_ns pid
	set_ns uts
	set_ns ipc
	set_ns network
	set_ns mount
	set_args sh -c 'for t in pid uts ipc net mnt; do readlink /proc/self/ns/$t; done'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${#lines[@]}" -eq 5 ] || fail "output: $output"
	local i=0
	for t in pid uts ipc net mnt; do
		[ "${lines[$i]}" != "$(ns_link self "$t")" ] || fail "$t: same as the host: ${lines[$i]}"
		i=$((i + 1))
	done
}

@test "network ns joined by path: ip netns add + a bridge inside, the container sees it" {
	local id ns ino
	id="$(new_id)"
	ns="$(new_netns)" || skip "ip netns add failed"
	ip -n "$ns" link add hbr0 type bridge || skip "cannot create a bridge (no bridge driver?)"
	ip -n "$ns" link set hbr0 up
	ino="$(stat -L -c %i "/var/run/netns/$ns")"

	set_ns network "/var/run/netns/$ns"
	set_args sh -c 'stat -L -c %i /proc/self/ns/net; readlink /proc/self/ns/net; cat /proc/net/dev; ip link'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = "$ino" ] || fail "netns inode inside ${lines[0]}, want $ino: $output"
	[ "${lines[1]}" = "net:[$ino]" ] || fail "readlink inside ${lines[1]}, want net:[$ino]"
	grep -q 'hbr0:' <<<"$output" || fail "hbr0 not visible inside: $output"
	# And the host's own interfaces are not there.
	local hostif
	hostif="$(ip -o link show | awk -F': ' '$2 != "lo" {print $2; exit}')"
	if [ -n "$hostif" ]; then
		! grep -q "${hostif%@*}:" <<<"$output" || fail "host interface $hostif visible inside"
	fi
}

@test "network ns joined by path: two containers share the netns" {
	local a b ns ino
	a="$(new_id)"
	b="$(new_id)"
	ns="$(new_netns)" || skip "ip netns add failed"
	ino="$(stat -L -c %i "/var/run/netns/$ns")"
	set_ns network "/var/run/netns/$ns"
	set_args sleep 100
	run_bg "$a"
	[ "$(stat -L -c %i "/proc/$(container_pid "$a")/ns/net")" = "$ino" ] || fail "first container not in $ns"
	set_args stat -L -c %i /proc/self/ns/net
	run -0 husk run --bundle "$BUNDLE" "$b" </dev/null
	[ "$output" = "$ino" ] || fail "second container: $output, want $ino"
}

@test "ipc and uts joined via /proc/PID/ns of another container" {
	local a b pid
	a="$(new_id)"
	b="$(new_id)"
	set_ns ipc
	set_ns uts
	update_config '.hostname = "husk-first"'
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"
	[ "$(ns_link "$pid" uts)" != "$(ns_link self uts)" ] || fail "first container shares the host's uts ns"

	# The second container joins both and sets no hostname of its own.
	set_ns ipc "/proc/$pid/ns/ipc"
	set_ns uts "/proc/$pid/ns/uts"
	update_config 'del(.hostname)'
	set_args sh -c 'readlink /proc/self/ns/ipc; readlink /proc/self/ns/uts; hostname'
	run -0 husk run --bundle "$BUNDLE" "$b" </dev/null
	[ "${lines[0]}" = "$(ns_link "$pid" ipc)" ] || fail "ipc: ${lines[0]} != $(ns_link "$pid" ipc)"
	[ "${lines[1]}" = "$(ns_link "$pid" uts)" ] || fail "uts: ${lines[1]} != $(ns_link "$pid" uts)"
	[ "${lines[2]}" = husk-first ] || fail "hostname: ${lines[2]}, want husk-first"
}

@test "ipc joined by path: a SysV message queue made in one container is seen in the other" {
	local a b pid
	a="$(new_id)"
	b="$(new_id)"
	command -v nsenter >/dev/null || skip "no nsenter (util-linux)"
	command -v ipcmk >/dev/null || skip "no ipcmk (util-linux)"
	set_ns ipc
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"
	# One queue in the first container's ipc ns, made from the host.
	nsenter -t "$pid" -i ipcmk -Q >/dev/null || fail "ipcmk in the ipc ns of $pid"
	set_ns ipc "/proc/$pid/ns/ipc"
	set_args cat /proc/sysvipc/msg
	run -0 husk run --bundle "$BUNDLE" "$b" </dev/null
	# The header line and exactly that one queue.
	[ "${#lines[@]}" -eq 2 ] || fail "want the header and one queue: $output"
}

@test "user ns: mapping 0 -> 100000, id inside shows root, host sees 100000" {
	local id pid
	requires_userns
	id="$(new_id)"
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_args id
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[[ "$output" == "uid=0(root) gid=0(root)"* ]] || fail "id: $output"

	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	pid="$(container_pid "$id")"
	grep -qP '^Uid:\t100000\t100000\t100000\t100000$' "/proc/$pid/status" || fail "host: $(grep -E '^(Uid|Gid):' "/proc/$pid/status")"
	grep -qP '^Gid:\t100000\t100000\t100000\t100000$' "/proc/$pid/status" || fail "host: $(grep -E '^(Uid|Gid):' "/proc/$pid/status")"
	[ "$(cat "/proc/$pid/uid_map" | xargs)" = "0 100000 65536" ] || fail "uid_map: $(cat "/proc/$pid/uid_map")"
	[ "$(cat "/proc/$pid/gid_map" | xargs)" = "0 100000 65536" ] || fail "gid_map: $(cat "/proc/$pid/gid_map")"
	[ "$(ns_link "$pid" user)" != "$(ns_link self user)" ] || fail "container shares the host's user ns"
}

@test "user ns: process.user 1000:1000 shows as 1000 inside and 101000 on the host" {
	local id pid
	requires_userns
	id="$(new_id)"
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .process.user = {"uid": 1000, "gid": 1000}'
	set_args id
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[[ "$output" == "uid=1000(user) gid=1000(user)"* ]] || fail "id: $output"

	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	pid="$(container_pid "$id")"
	grep -qP '^Uid:\t101000\t101000\t101000\t101000$' "/proc/$pid/status" || fail "host: $(grep -E '^(Uid|Gid):' "/proc/$pid/status")"
	grep -qP '^Gid:\t101000\t101000\t101000\t101000$' "/proc/$pid/status" || fail "host: $(grep -E '^(Uid|Gid):' "/proc/$pid/status")"
}

@test "user ns: the rootfs owned by host root reads as nobody but still runs" {
	local id
	requires_userns
	id="$(new_id)"
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_args sh -c 'stat -c %u /bin/busybox; cat /etc/passwd >/dev/null && echo readable'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = 65534 ] || fail "owner inside: ${lines[0]}"
	[ "${lines[1]}" = readable ] || fail "output: $output"
}

@test "process.user without a user ns: uid/gid and additional gids" {
	local id
	id="$(new_id)"
	update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [65534]}'
	set_args id
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[[ "$output" == "uid=1000(user) gid=1000(user)"* ]] || fail "id: $output"
	assert_contains "$output" "65534"
}

@test "network: a new network namespace has lo up, as runc and crun (where crun runs)" {
	load runtimes
	older_spec
	set_ns network
	# IFF_UP is bit 0 of the flags; ip shows UP in <...>.
	set_args sh -c 'cat /sys/class/net/lo/flags; ip link show lo'
	local bin id
	for bin in $(runtimes); do
		id="$(new_id)"
		run -0 rt "$bin" run --bundle "$BUNDLE" "$id" </dev/null
		[ $((${lines[0]} & 1)) -eq 1 ] || fail "$bin: lo flags ${lines[0]}: not up"
		assert_contains "${lines[1]}" ",UP"
	done
}
