#!/usr/bin/env bats
# Guest (a), the kubelet path on a modern node: containerd's CRI plugin with
# runc options SystemdCgroup = true and BinaryName = husk, a CNI bridge
# network, driven by criclient (a k8s.io/cri-api client) with a pod
# cgroup_parent that is a systemd slice, as kubelet's systemd driver passes
# it. containerd then hands husk --systemd-cgroup and
# SLICE:cri-containerd:ID cgroupsPaths.

load ../../clients/helpers

setup_file() {
	[ "${HUSK_VM_SETUP:-}" = a ] || skip "needs systemd as PID 1 (VM lane setup a)"
	runtime_ready
	export SUITE_DIR CRICLIENT SLICE_PREFIX CONTAINERD_SYSTEMD_CGROUP=true
	SUITE_DIR="$(new_suite_dir)"
	# kubelet's slices look like kubepods-besteffort-pod<uid>.slice.
	SLICE_PREFIX="hvmpods$$"
	CRICLIENT="$(build_criclient)" || fail "cannot find or build criclient"
	containerd_start "$SUITE_DIR" cri
	grep -q 'SystemdCgroup = true' "$SUITE_DIR/config.toml" || fail "containerd config without SystemdCgroup = true"
	local tar
	tar="$(build_image_tar)" || fail "cannot build the busybox image"
	ctr --address "$SUITE_DIR/c.sock" -n k8s.io images import "$tar" >/dev/null ||
		fail "ctr -n k8s.io images import $tar failed"
	wait_until 60 cri version >/dev/null || fail "the CRI plugin does not answer: $(cri version 2>&1)"
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	containerd_stop "$SUITE_DIR"
	systemctl stop "$SLICE_PREFIX.slice" 2>/dev/null || true
	clean_leaks "$SUITE_DIR"
	rm -rf "$SUITE_DIR"
}

setup() {
	PODS_FILE="$BATS_TEST_TMPDIR/pods"
	: >"$PODS_FILE"
}

teardown() {
	local pod
	[ -e "$SUITE_DIR/containerd.pid" ] || return 0
	for pod in $(cat "$PODS_FILE"); do
		cri stopp "$pod" >/dev/null 2>&1 || true
		cri rmp "$pod" >/dev/null 2>&1 || true
	done
}

cri() {
	timeout -k 5 "$CLIENT_TIMEOUT" "$CRICLIENT" -a "$SUITE_DIR/c.sock" "$@"
}

# pod_slice NAME: the pod's slice, a child of SLICE_PREFIX.slice.
pod_slice() {
	echo "$SLICE_PREFIX-pod$1.slice"
}

pod_flags() {
	echo "--name $1 --uid $1-uid --namespace husk --log-dir $SUITE_DIR/logs/$1 --cgroup-parent $(pod_slice "$1")"
}

pod_up() {
	mkdir -p "$SUITE_DIR/logs/$1"
	# shellcheck disable=SC2046
	POD="$(cri runp $(pod_flags "$1"))" || fail "RunPodSandbox $1 failed"
	echo "$POD" >>"$PODS_FILE"
}

container_up() {
	local name="$1"
	shift
	# shellcheck disable=SC2046
	CTR="$(cri create $(pod_flags "$name") --pod "$POD" --image "$IMAGE_REF" --log c.log -- "$@")" ||
		fail "CreateContainer in $name failed"
	cri start "$CTR" || fail "StartContainer $CTR failed"
}

netns_inode() {
	stat -L -c %i "$1"
}

cgroup_of_pid() {
	awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup"
}

@test "CRI (systemd): a pod sandbox runs in cri-containerd-ID.scope under the pod's slice, in containerd's netns, with the CNI IP" {
	local st netns pid ip cg path
	pod_up p1
	run -0 cri pstatus "$POD"
	st="$output"
	[ "$(jq -r .state <<<"$st")" = SANDBOX_READY ] || fail "state: $st"
	path="$(jq -r .info.runtimeSpec.linux.cgroupsPath <<<"$st")"
	[ "$path" = "$(pod_slice p1):cri-containerd:$POD" ] || fail "cgroupsPath: $path"
	pid="$(jq -r .info.pid <<<"$st")"
	cg="$(cgroup_of_pid "$pid")"
	[ "$cg" = "/$SLICE_PREFIX.slice/$(pod_slice p1)/cri-containerd-$POD.scope" ] || fail "sandbox cgroup: $cg"
	run -0 systemctl is-active "cri-containerd-$POD.scope"
	ip="$(jq -r .ip <<<"$st")"
	[[ "$ip" == 10.232.7.* ]] || fail "pod IP $ip not in 10.232.7.0/24"
	netns="$(jq -r '.info.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path' <<<"$st")"
	[[ "$netns" == /var/run/netns/cni-* ]] || fail "sandbox netns path: $netns"
	[ "$(netns_inode "$netns")" = "$(netns_inode "/proc/$pid/ns/net")" ] ||
		fail "sandbox pid $pid is not in $netns"
	run -0 nsenter --net="$netns" ip -4 -o addr show eth0
	assert_contains "$output" "inet $ip/24"
	run -0 cri stopp "$POD"
	run -0 cri rmp "$POD"
	[ ! -e "$netns" ] || fail "netns $netns left after RemovePodSandbox"
	wait_until 10 test ! -d "/sys/fs/cgroup$cg" || fail "cgroup $cg left after RemovePodSandbox"
	run systemctl list-units --all --no-legend "cri-containerd-$POD.scope"
	[ -z "$output" ] || fail "unit left: $output"
}

@test "CRI (systemd): a container runs in its scope under the pod's slice, in the pod's netns; ExecSync sees the CNI IP" {
	require_exec
	local st netns pid ip cg
	pod_up p2
	st="$(cri pstatus "$POD")"
	ip="$(jq -r .ip <<<"$st")"
	netns="$(jq -r '.info.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path' <<<"$st")"
	container_up p2 sleep 1000
	run -0 cri status "$CTR"
	st="$output"
	[ "$(jq -r .state <<<"$st")" = CONTAINER_RUNNING ] || fail "status: $st"
	pid="$(jq -r .info.pid <<<"$st")"
	cg="$(cgroup_of_pid "$pid")"
	[ "$cg" = "/$SLICE_PREFIX.slice/$(pod_slice p2)/cri-containerd-$CTR.scope" ] || fail "container cgroup: $cg"
	[ "$(netns_inode "$netns")" = "$(netns_inode "/proc/$pid/ns/net")" ] ||
		fail "container pid $pid is not in the pod netns $netns"
	run -0 --separate-stderr cri exec "$CTR" sh -c 'echo out; echo err >&2'
	[ "$output" = out ] || fail "stdout: $output"
	run -7 cri exec "$CTR" sh -c 'exit 7'
	run -0 cri exec "$CTR" ip -4 -o addr show eth0
	assert_contains "$output" "inet $ip/24"
	run -0 cri stop --timeout 1 "$CTR"
	run -0 cri status "$CTR"
	[ "$(jq -r .exitCode <<<"$output")" = 137 ] || fail "after stop: $output"
	assert_pid_gone "$pid"
	run -0 cri rm "$CTR"
	wait_until 10 test ! -d "/sys/fs/cgroup$cg" || fail "cgroup $cg left after RemoveContainer"
}

@test "CRI (systemd): UpdateContainerResources reaches the scope: memory.max, cpu.weight and the unit's MemoryMax" {
	local cg
	pod_up p3
	container_up p3 sleep 1000
	run -0 cri update --memory 67108864 --cpu-shares 512 "$CTR"
	cg="$(cgroup_of_pid "$(cri status "$CTR" | jq -r .info.pid)")"
	run -0 cat "/sys/fs/cgroup$cg/memory.max"
	[ "$output" = 67108864 ] || fail "memory.max of $cg: $output"
	# cpu.shares 512 as cpu.weight: 20 by runc 1.1's linear conversion
	# (1 + (512-2)*9999/262142), 59 by the one of opencontainers/cgroups
	# that runc >= 1.3 uses (it maps 1024 to 100); the default is 100.
	run -0 cat "/sys/fs/cgroup$cg/cpu.weight"
	[ "$output" = 20 ] || [ "$output" = 59 ] || fail "cpu.weight of $cg: $output (want 20 or 59 for shares 512)"
	run -0 systemctl show -p MemoryMax "cri-containerd-$CTR.scope"
	[ "$output" = MemoryMax=67108864 ] || fail "systemctl show: $output"
}

@test "zz: CRI (systemd): containerd stops; no scope, cgroup, netns or veth is left" {
	local veths units
	containerd_stop "$SUITE_DIR"
	veths="$(ip -o link show master hcri0 2>/dev/null || true)"
	[ -z "$veths" ] || fail "veths still on hcri0: $veths"
	ip link delete hcri0 2>/dev/null || true
	units="$(systemctl list-units --all --no-legend 'cri-containerd-*')"
	[ -z "$units" ] || fail "scopes left: $units"
	# kubelet removes pod slices; here the suite does.
	systemctl stop "$SLICE_PREFIX.slice" || true
	assert_nothing_left "$SUITE_DIR" "$SLICE_PREFIX.slice"
}
