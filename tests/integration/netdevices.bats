#!/usr/bin/env bats
# linux.netDevices: a host device moves into the container's network
# namespace (renamed, addresses kept) and back to the host on delete.

load helpers

setup() {
	setup_husk
	VETH="hv$$$RANDOM"
	PEER="hp$$$RANDOM"
	ip link add "$VETH" type veth peer name "$PEER" || skip "cannot make a veth pair"
	ip addr add 10.200.$((RANDOM % 200)).1/24 dev "$VETH"
	ip link set "$VETH" up
}

teardown() {
	teardown_husk
	ip link delete "$PEER" 2>/dev/null || true
	ip link delete "$VETH" 2>/dev/null || true
}

@test "netDevices: a veth end moves in, renamed, with its address and up" {
	local id addr
	id="$(new_id)"
	addr="$(ip -4 -o addr show dev "$VETH" | awk '{print $4}')"
	update_config --arg d "$VETH" '.linux.netDevices = {($d): {"name": "eth1"}}'
	create_bg "$id"
	ip link show "$VETH" >/dev/null 2>&1 && fail "$VETH still on the host after create"
	run -0 nsenter -t "$(container_pid "$id")" -n ip -o addr show dev eth1
	assert_contains "$output" "$addr"
	run -0 nsenter -t "$(container_pid "$id")" -n ip -o link show dev eth1
	[[ "$output" == *"state UP"* || "$output" == *",UP"* ]] || fail "eth1 not up: $output"
	run -0 husk delete --force "$id"
	run -0 ip -o link show dev "$VETH"
}

@test "netDevices: without a name the device keeps its own" {
	local id
	id="$(new_id)"
	update_config --arg d "$VETH" '.linux.netDevices = {($d): {}}'
	set_args sh -c "ip -o link show dev $VETH >/dev/null && echo found"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = found ] || fail "output: $output"
}

@test "netDevices: a missing host device names the field and the device" {
	local id
	id="$(new_id)"
	update_config --arg d "$VETH" '.linux.netDevices = {($d): {"name": "eth1"}, "nosuchdev0": {}}'
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" 'linux.netDevices["nosuchdev0"]' "no such device on the host"
	assert_no_container "$id"
	run -0 ip -o link show dev "$VETH"
}

@test "netDevices: refused without a network namespace" {
	local id
	id="$(new_id)"
	del_ns network
	update_config --arg d "$VETH" '.linux.netDevices = {($d): {}}'
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "linux.netDevices" '"network" namespace'
	assert_no_container "$id"
}
