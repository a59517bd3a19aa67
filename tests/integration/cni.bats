#!/usr/bin/env bats
# CNI networking: husk's built-in path (annotation io.husk.cni.network) and
# the `husk cni-hook` OCI hook, with Debian's containernetworking-plugins
# (bridge + host-local + loopback) on a private subnet. Every test has its
# own network list, conf dir, libcni cache, host-local dataDir, bridge
# (hcni*) and /24 inside 10.231.0.0/16; traffic stays between the bridge
# and the containers' network namespaces.

load helpers

CNI_PLUGINS=/usr/lib/cni

setup() {
	[ -x "$CNI_PLUGINS/bridge" ] && [ -x "$CNI_PLUGINS/host-local" ] && [ -x "$CNI_PLUGINS/loopback" ] ||
		skip "no CNI plugins in $CNI_PLUGINS (apt-get install containernetworking-plugins)"
	setup_husk
	CNI_CONF="$TEST_DIR/net.d"
	CNI_CACHE="$TEST_DIR/cni-cache"
	CNI_BIN="$TEST_DIR/cni-bin"
	CNI_IPAM="$TEST_DIR/ipam"
	mkdir -p "$CNI_CONF" "$CNI_CACHE" "$CNI_BIN" "$CNI_IPAM"
	CNI_NET="hcni-net-$$-$RANDOM"
	CNI_BRIDGE="hcni$(printf '%04x%04x' $RANDOM $RANDOM)"
	local n=$((RANDOM % 256))
	CNI_PREFIX="10.231.$n"
	CNI_GW="$CNI_PREFIX.1"
	# The bridge of this test, for the teardown (TEST_DIR is gone by then).
	echo "$CNI_BRIDGE" >"$TEST_DIR/bridge"
	# ping in the container: busybox needs a raw socket.
	update_config '.process.capabilities |= with_entries(select(.key != "ambient") | .value = (.value + ["CAP_NET_RAW"] | unique))'
}

teardown() {
	local ids=() id rc=0
	[ -n "${TEST_DIR:-}" ] || return 0
	mapfile -t ids <"$IDS_FILE" 2>/dev/null || true
	teardown_husk || rc=1
	# What the CNI path made: netns, its mount, veths on the bridge.
	for id in "${ids[@]}"; do
		[ -n "$id" ] || continue
		if [ -e "/var/run/netns/husk-$id" ]; then
			echo "LEAK: /var/run/netns/husk-$id" >&2
			umount -l "/var/run/netns/husk-$id" 2>/dev/null
			rm -f "/var/run/netns/husk-$id"
			rc=1
		fi
		if grep -qF "husk-$id" /proc/self/mountinfo; then
			echo "LEAK: mount of husk-$id" >&2
			rc=1
		fi
	done
	if [ -n "${CNI_BRIDGE:-}" ] && ip link show "$CNI_BRIDGE" >/dev/null 2>&1; then
		if [ -n "$(ip -o link show master "$CNI_BRIDGE")" ]; then
			echo "LEAK: links on $CNI_BRIDGE: $(ip -o link show master "$CNI_BRIDGE")" >&2
			rc=1
		fi
		ip link delete "$CNI_BRIDGE"
	fi
	return "$rc"
}

# husk with this test's CNI directories (every call, delete included).
husk() {
	timeout -k 5 "$HUSK_TIMEOUT" "$HUSK_BIN" --root "$HUSK_ROOT" \
		--cni-conf-dir "$CNI_CONF" --cni-bin-dir "$CNI_BIN:$CNI_PLUGINS" \
		--cni-cache-dir "$CNI_CACHE" "$@"
}

# write_net [PLUGIN_JSON...]: the test's network list: bridge with
# host-local, then loopback, then the extra plugins given.
write_net() {
	local extra=""
	for p in "$@"; do extra="$extra, $p"; done
	cat >"$CNI_CONF/10-$CNI_NET.conflist" <<-EOF
		{"cniVersion": "1.0.0", "name": "$CNI_NET", "plugins": [
		 {"type": "bridge", "bridge": "$CNI_BRIDGE", "isGateway": true, "ipMasq": false,
		  "ipam": {"type": "host-local", "dataDir": "$CNI_IPAM",
		           "ranges": [[{"subnet": "$CNI_PREFIX.0/24"}]],
		           "routes": [{"dst": "0.0.0.0/0"}]}},
		 {"type": "loopback"}$extra]}
	EOF
}

# use_cni: the container asks for the test's network (built-in path).
use_cni() {
	update_config --arg n "$CNI_NET" '.annotations["io.husk.cni.network"] = $n'
}

# ipam_ips prints the addresses host-local holds for the test's network.
ipam_ips() {
	ls "$CNI_IPAM/$CNI_NET" 2>/dev/null | grep -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' || true
}

# state_ip ID prints the container's IPv4 (no prefix) from `husk state`.
state_ip() {
	husk state "$1" | jq -r '.cni.result.ips[0].address' | cut -d/ -f1
}

# wait_file_has FILE TEXT [SECONDS]
wait_file_has() {
	local f="$1" text="$2" secs="${3:-10}" i
	for ((i = 0; i < secs * 20; i++)); do
		grep -qF -- "$text" "$f" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no '$text' in $f after ${secs}s: $(cat "$f" 2>/dev/null)"
}

# assert_network_gone ID: nothing of the container's attachment is left.
assert_network_gone() {
	local id="$1"
	[ ! -e "/var/run/netns/husk-$id" ] || fail "netns husk-$id still there"
	! ip netns list | grep -qw -- "husk-$id" || fail "ip netns still lists husk-$id"
	! grep -qF "husk-$id" /proc/self/mountinfo || fail "mount of husk-$id left"
	[ -z "$(ls -A "$CNI_CACHE/results" 2>/dev/null | grep -F -- "$id")" ] ||
		fail "libcni cache left: $(ls "$CNI_CACHE/results")"
}

# assert_bridge_empty: no veth left on the test's bridge, no address held.
assert_bridge_empty() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -z "$(ip -o link show master "$CNI_BRIDGE" 2>/dev/null)" ] && break
		sleep 0.05
	done
	[ -z "$(ip -o link show master "$CNI_BRIDGE" 2>/dev/null)" ] ||
		fail "links left on $CNI_BRIDGE: $(ip -o link show master "$CNI_BRIDGE")"
	[ -z "$(ipam_ips)" ] || fail "host-local still holds: $(ipam_ips)"
}

@test "cni: the container gets an address from the range, a default route via the bridge, pings it" {
	local id ip pid hostveth
	id="$(new_id)"
	write_net
	use_cni
	set_args sh -c "ip addr show eth0; ip route; ping -c1 -W3 $CNI_GW && echo PING-GW-OK; echo DONE; sleep 600"
	run_bg "$id"
	wait_file_has "$TEST_DIR/$id.out" DONE

	run -0 husk state "$id"
	local st="$output"
	# runc's fields unchanged, husk's attachment beside them.
	[ "$(jq -r '[keys_unsorted[]] | join(",")' <<<"$st")" = "ociVersion,id,pid,status,bundle,rootfs,created,owner,annotations,cni" ] ||
		fail "state keys: $st"
	[ "$(jq -r .cni.network <<<"$st")" = "$CNI_NET" ] || fail "cni.network: $st"
	[ "$(jq -r .cni.ifname <<<"$st")" = eth0 ] || fail "cni.ifname: $st"
	[ "$(jq -r .cni.netns <<<"$st")" = "/var/run/netns/husk-$id" ] || fail "cni.netns: $st"
	ip="$(state_ip "$id")"
	[[ "$ip" == "$CNI_PREFIX".* ]] && [ "$ip" != "$CNI_GW" ] || fail "address $ip not from $CNI_PREFIX.0/24"

	# The container's own view.
	local out
	out="$(cat "$TEST_DIR/$id.out")"
	assert_contains "$out" "inet $ip/24" "default via $CNI_GW dev eth0" PING-GW-OK

	# It lives in the named netns husk made.
	pid="$(container_pid "$id")"
	[ "$(stat -L -c %i "/proc/$pid/ns/net")" = "$(stat -L -c %i "/var/run/netns/husk-$id")" ] ||
		fail "the container is not in /var/run/netns/husk-$id"
	ip netns list | grep -qw -- "husk-$id" || fail "ip netns does not list husk-$id"
	[ "$(ipam_ips)" = "$ip" ] || fail "host-local holds '$(ipam_ips)', want $ip"
	hostveth="$(husk state "$id" | jq -r '.cni.result.interfaces[] | select(.sandbox == null and .name != "'"$CNI_BRIDGE"'") | .name')"
	ip link show "$hostveth" >/dev/null || fail "no host veth $hostveth"

	# DEL runs from libcni's cache: the list may be gone by now.
	rm "$CNI_CONF/10-$CNI_NET.conflist"
	run -0 husk delete --force "$id"
	assert_no_container "$id"
	assert_network_gone "$id"
	assert_bridge_empty
	! ip link show "$hostveth" >/dev/null 2>&1 || fail "host veth $hostveth left"
}

@test "cni: two containers on one network ping each other" {
	local a b ipa ipb pida
	a="$(new_id)"
	b="$(new_id)"
	write_net
	use_cni
	set_args sh -c 'echo UP; sleep 600'
	run_bg "$a"
	ipa="$(state_ip "$a")"
	set_args sh -c "ping -c1 -W3 $ipa && echo PING-PEER-OK; echo DONE; sleep 600"
	run_bg "$b"
	ipb="$(state_ip "$b")"
	[ "$ipa" != "$ipb" ] || fail "both have $ipa"
	wait_file_has "$TEST_DIR/$b.out" DONE
	assert_contains "$(cat "$TEST_DIR/$b.out")" PING-PEER-OK
	# And back, from inside a's namespaces with the container's own ping.
	pida="$(container_pid "$a")"
	run -0 nsenter -t "$pida" -m -n -- /bin/ping -c1 -W3 "$ipb"
	[ "$(ipam_ips | sort)" = "$(printf '%s\n' "$ipa" "$ipb" | sort)" ] || fail "host-local holds: $(ipam_ips)"

	run -0 husk delete --force "$a"
	run -0 husk delete --force "$b"
	assert_network_gone "$a"
	assert_network_gone "$b"
	assert_bridge_empty
}

@test "cni: run cleans up the network when the container exits" {
	local id
	id="$(new_id)"
	write_net
	use_cni
	set_args sh -c 'ip addr show eth0 | grep "inet "'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "inet $CNI_PREFIX."
	assert_no_container "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni: ifname, args and capabilities annotations reach the plugins" {
	local id
	id="$(new_id)"
	write_net
	use_cni
	# host-local takes the address from CNI_ARGS IP= (IgnoreUnknown for the
	# others); ipRanges is a capability the list does not declare, so
	# libcni drops it: passing it must not break anything.
	update_config --arg ip "$CNI_PREFIX.77" '.annotations += {
		"io.husk.cni.ifname": "net1",
		"io.husk.cni.args": ("IgnoreUnknown=1;IP=" + $ip),
		"io.husk.cni.capabilities": "{\"ipRanges\": []}"}'
	set_args sh -c 'ip addr show net1 | grep "inet "; echo DONE; sleep 600'
	run_bg "$id"
	wait_file_has "$TEST_DIR/$id.out" DONE
	assert_contains "$(cat "$TEST_DIR/$id.out")" "inet $CNI_PREFIX.77/24"
	[ "$(husk state "$id" | jq -r .cni.ifname)" = net1 ] || fail "state ifname"
	# A plain delete of the stopped container detaches it too.
	run -0 husk kill "$id" KILL
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni check: passes on a healthy container, fails once its address is gone" {
	local id
	id="$(new_id)"
	write_net
	use_cni
	set_args sleep 600
	run_bg "$id"
	run -0 husk cni check "$id"
	ip -n "husk-$id" addr flush dev eth0
	run ! husk cni check "$id"
	assert_contains "$output" "CNI CHECK of network \"$CNI_NET\""
	run -0 husk delete --force "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni check: a container without a CNI network is an error" {
	local id
	id="$(new_id)"
	set_args sleep 600
	run_bg "$id"
	run ! husk cni check "$id"
	assert_contains "$output" "no CNI network" "io.husk.cni.network"
}

@test "cni: a missing plugin binary fails create with libcni's words, leaves nothing" {
	local id
	id="$(new_id)"
	# bridge + host-local succeed first, so the undo has something to undo.
	write_net '{"type": "hcni-no-such-plugin"}'
	use_cni
	set_args true
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "hcni-no-such-plugin" 'failed to find plugin'
	assert_no_container "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni: a plugin that fails (bad config) fails create with its error, leaves nothing" {
	local id
	id="$(new_id)"
	write_net
	# host-local refuses a range start outside its subnet; bridge has made
	# the veth by then.
	jq --arg s "10.231.255.250" '.plugins[0].ipam.ranges[0][0].rangeStart = $s' \
		"$CNI_CONF/10-$CNI_NET.conflist" >"$TEST_DIR/l" && mv "$TEST_DIR/l" "$CNI_CONF/10-$CNI_NET.conflist"
	use_cni
	set_args true
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "CNI ADD of network \"$CNI_NET\"" "10.231.255.250"
	assert_no_container "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni: a create that fails after the ADD (a createRuntime hook) detaches, leaves nothing" {
	local id
	id="$(new_id)"
	write_net
	use_cni
	set_args true
	update_config '.hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "echo hcni-hook-says-no >&2; exit 3"]}]'
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" hcni-hook-says-no
	assert_no_container "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni: a network list that does not exist fails create, leaves nothing" {
	local id
	id="$(new_id)"
	use_cni
	set_args true
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "CNI network \"$CNI_NET\" in $CNI_CONF"
	assert_no_container "$id"
	assert_network_gone "$id"
}

@test "cni: a spec that asks for CNI in the host's netns, or a netns by path, is refused" {
	local id ns
	id="$(new_id)"
	write_net
	use_cni
	set_args true
	del_ns network
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" 'config.json: annotations["io.husk.cni.network"]' 'no "network" entry'
	assert_no_container "$id"

	ns="$(new_netns)" || skip "ip netns add failed"
	set_ns network "/var/run/netns/$ns"
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" 'annotations["io.husk.cni.network"]' "path \"/var/run/netns/$ns\""
	assert_no_container "$id"

	set_ns network
	update_config '.annotations["io.husk.cni.ifname"] = "bad/name"'
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" 'annotations["io.husk.cni.ifname"]: invalid "bad/name"'
	assert_no_container "$id"

	update_config --arg n "$CNI_NET" '.annotations = {"io.husk.cni.network": $n, "io.husk.cni.hook.network": $n}'
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "set one, not both"
	assert_no_container "$id"
	assert_network_gone "$id"
}

@test "cni: delete --force cleans up after husk was killed in the middle of the ADD" {
	local id pid i
	id="$(new_id)"
	# A plugin that hangs in ADD (after bridge + host-local did theirs) and
	# succeeds at DEL.
	cat >"$CNI_BIN/hcni-hang" <<-EOF
		#!/bin/sh
		cat >/dev/null
		[ "\$CNI_COMMAND" = ADD ] || exit 0
		echo \$\$ >"$TEST_DIR/hang.pid"
		exec sleep 60
	EOF
	chmod +x "$CNI_BIN/hcni-hang"
	write_net '{"type": "hcni-hang"}'
	use_cni
	set_args true
	"$HUSK_BIN" --root "$HUSK_ROOT" --cni-conf-dir "$CNI_CONF" --cni-bin-dir "$CNI_BIN:$CNI_PLUGINS" \
		--cni-cache-dir "$CNI_CACHE" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- &
	pid=$!
	track_bg "$pid"
	for ((i = 0; i < 200; i++)); do
		[ -s "$TEST_DIR/hang.pid" ] && break
		sleep 0.05
	done
	[ -s "$TEST_DIR/hang.pid" ] || fail "the hanging plugin never ran"
	track_bg "$(cat "$TEST_DIR/hang.pid")"
	kill -9 "$pid"
	kill -9 "$(cat "$TEST_DIR/hang.pid")"
	wait "$pid" 2>/dev/null || true
	# What the killed create left: the netns, an address, a veth.
	[ -e "/var/run/netns/husk-$id" ] || fail "no netns: the kill came too late to test anything"
	[ -n "$(ipam_ips)" ] || fail "host-local holds nothing"
	run husk state "$id"
	[ "$status" -ne 0 ] || fail "state of a half-made container: $output"

	run -0 husk delete --force "$id"
	assert_no_container "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni-hook: createRuntime add + poststop del give the same network to a container in its own netns" {
	local id ip pid
	id="$(new_id)"
	write_net
	local hook=("$HUSK_BIN" --cni-conf-dir "$CNI_CONF" --cni-bin-dir "$CNI_PLUGINS" --cni-cache-dir "$CNI_CACHE" cni-hook)
	local args
	args="$(for a in husk "${hook[@]:1}"; do jq -n --arg a "$a" '$a'; done | jq -cs .)"
	update_config --arg n "$CNI_NET" --arg p "$HUSK_BIN" --argjson a "$args" '
		.annotations["io.husk.cni.hook.network"] = $n
		| .hooks.createRuntime = [{path: $p, args: ($a + ["add"])}]
		| .hooks.poststop = [{path: $p, args: $a}]'
	set_args sh -c "ip addr show eth0; ip route; ping -c1 -W3 $CNI_GW && echo PING-GW-OK; echo DONE; sleep 600"
	run_bg "$id"
	wait_file_has "$TEST_DIR/$id.out" DONE
	local out
	out="$(cat "$TEST_DIR/$id.out")"
	assert_contains "$out" "inet $CNI_PREFIX." "default via $CNI_GW dev eth0" PING-GW-OK
	ip="$(grep -o "inet $CNI_PREFIX\.[0-9]*" <<<"$out" | cut -d' ' -f2)"
	[ "$(ipam_ips)" = "$ip" ] || fail "host-local holds '$(ipam_ips)', want $ip"
	# No built-in attachment: no named netns, nothing in the state.
	[ ! -e "/var/run/netns/husk-$id" ] || fail "the built-in path ran too"
	[ "$(husk state "$id" | jq -r '.cni // "none"')" = none ] || fail "state has a cni field"

	run -0 husk delete --force "$id"
	assert_no_container "$id"
	assert_network_gone "$id"
	assert_bridge_empty
}

@test "cni-hook: the state's status picks add or del; bad input is refused" {
	local id
	id="$(new_id)"
	write_net
	# No annotation: an error naming it.
	run ! "$HUSK_BIN" cni-hook <<<'{"ociVersion":"1.3.0","id":"x","status":"creating","pid":1,"bundle":"/"}'
	assert_contains "$output" "io.husk.cni.hook.network"
	# Running is neither add nor del.
	run ! "$HUSK_BIN" cni-hook <<<"{\"ociVersion\":\"1.3.0\",\"id\":\"$id\",\"status\":\"running\",\"pid\":1,\"bundle\":\"/\",\"annotations\":{\"io.husk.cni.hook.network\":\"$CNI_NET\"}}"
	assert_contains "$output" 'status "running": say add or del'
	run ! "$HUSK_BIN" cni-hook <<<'not json'
	assert_contains "$output" "OCI state on stdin"
	run ! "$HUSK_BIN" cni-hook frob <<<"{\"id\":\"$id\",\"status\":\"created\",\"pid\":1,\"annotations\":{\"io.husk.cni.hook.network\":\"$CNI_NET\"}}"
	assert_contains "$output" 'unknown action "frob"'

	# status stopped: DEL (with no netns), which is fine with nothing added.
	run -0 "$HUSK_BIN" --cni-conf-dir "$CNI_CONF" --cni-bin-dir "$CNI_PLUGINS" --cni-cache-dir "$CNI_CACHE" \
		cni-hook <<<"{\"ociVersion\":\"1.3.0\",\"id\":\"$id\",\"status\":\"stopped\",\"bundle\":\"/\",\"annotations\":{\"io.husk.cni.hook.network\":\"$CNI_NET\"}}"
}

@test "cni-hook: works as runc's hook too" {
	command -v runc >/dev/null || skip "runc not installed"
	local id out
	id="$(new_id)"
	write_net
	local args
	args="$(for a in husk --cni-conf-dir "$CNI_CONF" --cni-bin-dir "$CNI_PLUGINS" --cni-cache-dir "$CNI_CACHE" cni-hook; do
		jq -n --arg a "$a" '$a'
	done | jq -cs .)"
	update_config --arg n "$CNI_NET" --arg p "$HUSK_BIN" --argjson a "$args" '
		.annotations["io.husk.cni.hook.network"] = $n
		| .hooks.createRuntime = [{path: $p, args: ($a + ["add"])}]
		| .hooks.poststop = [{path: $p, args: ($a + ["del"])}]'
	set_args sh -c "ip addr show eth0 | grep 'inet '; ping -c1 -W3 $CNI_GW >/dev/null && echo PING-GW-OK"
	run runc --root "$TEST_DIR/runc" run --bundle "$BUNDLE" "$id" </dev/null
	runc --root "$TEST_DIR/runc" delete --force "$id" >/dev/null 2>&1 || true
	[ "$status" -eq 0 ] || fail "runc run: $output"
	assert_contains "$output" "inet $CNI_PREFIX." PING-GW-OK
	assert_bridge_empty
	[ -z "$(ls -A "$CNI_CACHE/results" 2>/dev/null)" ] || fail "libcni cache left: $(ls "$CNI_CACHE/results")"
}
