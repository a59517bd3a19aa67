#!/usr/bin/env bats
# The Kubernetes path: containerd's CRI plugin (runtime io.containerd.runc.v2,
# BinaryName = the runtime under test, CNI bridge hcri0 in 10.232.7.0/24)
# driven by criclient, a k8s.io/cri-api client as kubelet is one.

load helpers

setup_file() {
	runtime_ready
	export SUITE_DIR CRICLIENT CGROUP_PARENT
	SUITE_DIR="$(new_suite_dir)"
	CGROUP_PARENT="hcri$$"
	CRICLIENT="$(build_criclient)" || fail "cannot build tests/clients/criclient"
	containerd_start "$SUITE_DIR" cri
	local tar
	tar="$(build_image_tar)" || fail "cannot build the busybox image"
	ctr --address "$SUITE_DIR/c.sock" -n k8s.io images import "$tar" >/dev/null ||
		fail "ctr -n k8s.io images import $tar failed"
	wait_until 20 cri version >/dev/null || fail "the CRI plugin does not answer: $(cri version 2>&1)"
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	containerd_stop "$SUITE_DIR"
	remove_cgroup_parent "$CGROUP_PARENT"
	clean_leaks "$SUITE_DIR" "$CGROUP_PARENT"
	rm -rf "$SUITE_DIR"
}

setup() {
	PODS_FILE="$BATS_TEST_TMPDIR/pods"
	: >"$PODS_FILE"
}

# Every test stops and removes its pods (which removes their containers).
teardown() {
	local pod
	[ -e "$SUITE_DIR/containerd.pid" ] || return 0 # the last test stopped it
	for pod in $(cat "$PODS_FILE"); do
		cri stopp "$pod" >/dev/null 2>&1 || true
		cri rmp "$pod" >/dev/null 2>&1 || true
	done
}

cri() {
	timeout -k 5 "$CLIENT_TIMEOUT" "$CRICLIENT" -a "$SUITE_DIR/c.sock" "$@"
}

# pod_flags NAME prints the pod flags kubelet's config would carry; the
# cgroup parent is /$CGROUP_PARENT, or POD_PARENT when set.
pod_flags() {
	echo "--name $1 --uid $1-uid --namespace husk --log-dir $SUITE_DIR/logs/$1 --cgroup-parent ${POD_PARENT:-/$CGROUP_PARENT}"
}

# pod_up NAME: RunPodSandbox; sets POD (its id), remembered for the teardown.
pod_up() {
	mkdir -p "$SUITE_DIR/logs/$1"
	# shellcheck disable=SC2046
	POD="$(cri runp $(pod_flags "$1"))" || fail "RunPodSandbox $1 failed"
	echo "$POD" >>"$PODS_FILE"
}

# container_up POD-NAME ARGS...: CreateContainer + StartContainer of a
# busybox container (log c.log) in the pod POD; sets CTR (its id).
container_up() {
	local name="$1"
	shift
	# shellcheck disable=SC2046
	CTR="$(cri create $(pod_flags "$name") --pod "$POD" --image "$IMAGE_REF" --log c.log -- "$@")" ||
		fail "CreateContainer in $name failed"
	cri start "$CTR" || fail "StartContainer $CTR failed"
}

# ctr_state ID prints the container's CRI state (CONTAINER_RUNNING, ...).
ctr_state() {
	cri status "$1" | jq -r .state
}

# netns_inode PATH prints the inode of a netns file or /proc/PID/ns/net.
netns_inode() {
	stat -L -c %i "$1"
}

@test "CRI: a pod sandbox runs in the netns CNI set up under /var/run/netns, with the CNI IP" {
	local st netns pid ip
	pod_up p1
	run -0 cri pstatus "$POD"
	st="$output"
	[ "$(jq -r .state <<<"$st")" = SANDBOX_READY ] || fail "state: $st"
	ip="$(jq -r .ip <<<"$st")"
	[[ "$ip" == 10.232.7.* ]] || fail "pod IP $ip not in 10.232.7.0/24"
	netns="$(jq -r '.info.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path' <<<"$st")"
	[[ "$netns" == /var/run/netns/cni-* ]] || fail "sandbox netns path: $netns"
	[ -e "$netns" ] || fail "no netns file $netns"
	pid="$(jq -r .info.pid <<<"$st")"
	[ "$(netns_inode "$netns")" = "$(netns_inode "/proc/$pid/ns/net")" ] ||
		fail "sandbox pid $pid is not in $netns"
	# The CNI result's address is on eth0 inside that netns.
	run -0 nsenter --net="$netns" ip -4 -o addr show eth0
	assert_contains "$output" "inet $ip/24"
	run -0 cri stopp "$POD"
	run -0 cri rmp "$POD"
	[ ! -e "$netns" ] || fail "netns $netns left after RemovePodSandbox"
	run ! cri pstatus "$POD"
}

@test "CRI: a busybox container in the pod runs in the pod's netns, logs, and stops" {
	local st netns pid log
	pod_up p2
	netns="$(cri pstatus "$POD" | jq -r '.info.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path')"
	container_up p2 sh -c 'echo hello-log; echo err-log >&2; exec sleep 1000'
	run -0 cri status "$CTR"
	st="$output"
	[ "$(jq -r .state <<<"$st")" = CONTAINER_RUNNING ] || fail "status: $st"
	pid="$(jq -r .info.pid <<<"$st")"
	pid_alive "$pid" || fail "container pid $pid not alive"
	[ "$(netns_inode "$netns")" = "$(netns_inode "/proc/$pid/ns/net")" ] ||
		fail "container pid $pid is not in the pod netns $netns"
	log="$(jq -r .logPath <<<"$st")"
	[ "$log" = "$SUITE_DIR/logs/p2/c.log" ] || fail "log path: $log"
	wait_until 10 grep -q 'err-log' "$log" || fail "log $log: $(cat "$log")"
	# CRI log format: RFC3339Nano time, stream, P(artial)/F(ull) tag, text.
	grep -Eq '^[0-9-]+T[0-9:.]+(Z|[+-][0-9:]+) stdout F hello-log$' "$log" || fail "log: $(cat "$log")"
	grep -Eq '^[0-9-]+T[0-9:.]+(Z|[+-][0-9:]+) stderr F err-log$' "$log" || fail "log: $(cat "$log")"
	run -0 cri stop --timeout 1 "$CTR"
	run -0 cri status "$CTR"
	[ "$(jq -r .state <<<"$output")" = CONTAINER_EXITED ] || fail "after stop: $output"
	[ "$(jq -r .exitCode <<<"$output")" = 137 ] || fail "after stop: $output"
	assert_pid_gone "$pid"
	run -0 cri rm "$CTR"
	run -0 cri stopp "$POD"
	run -0 cri rmp "$POD"
	[ ! -e "$netns" ] || fail "netns $netns left after RemovePodSandbox"
}

@test "CRI: a container's exit code reaches ContainerStatus" {
	pod_up p3
	container_up p3 sh -c 'exit 3'
	wait_until 10 bash -c "[ \"\$($CRICLIENT -a $SUITE_DIR/c.sock status $CTR | jq -r .state)\" = CONTAINER_EXITED ]" ||
		fail "state: $(ctr_state "$CTR")"
	run -0 cri status "$CTR"
	[ "$(jq -r .exitCode <<<"$output")" = 3 ] || fail "status: $output"
}

@test "CRI: StopPodSandbox stops a running container, RemovePodSandbox removes it" {
	local pid
	pod_up p5
	container_up p5 sleep 1000
	pid="$(cri status "$CTR" | jq -r .info.pid)"
	run -0 cri stopp "$POD"
	assert_pid_gone "$pid"
	run -0 cri status "$CTR"
	[ "$(jq -r .state <<<"$output")" = CONTAINER_EXITED ] || fail "after StopPodSandbox: $output"
	run -0 cri rmp "$POD"
	run ! cri status "$CTR"
}

@test "CRI: UpdateContainerResources reaches the container's cgroup" {
	local cg
	pod_up p6
	container_up p6 sleep 1000
	run -0 cri update --memory 67108864 --cpu-shares 512 "$CTR"
	cg="$(cri status "$CTR" | jq -r .info.runtimeSpec.linux.cgroupsPath)"
	run -0 cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes"
	[ "$output" = 67108864 ] || fail "memory.limit_in_bytes of $cg: $output"
	run -0 cat "/sys/fs/cgroup/cpu$cg/cpu.shares"
	[ "$output" = 512 ] || fail "cpu.shares of $cg: $output"
}

@test "CRI: ExecSync in a running container: output, exit code, the pod IP on eth0" {
	require_exec
	local ip
	pod_up p4
	ip="$(cri pstatus "$POD" | jq -r .ip)"
	container_up p4 sleep 1000
	run -0 --separate-stderr cri exec "$CTR" sh -c 'echo out; echo err >&2'
	[ "$output" = out ] || fail "stdout: $output"
	[ "$stderr" = err ] || fail "stderr: $stderr"
	run -7 cri exec "$CTR" sh -c 'exit 7'
	run -0 cri exec "$CTR" ip -4 -o addr show eth0
	assert_contains "$output" "inet $ip/24"
}

# containerd writes linux.cgroupsPath as "slice:prefix:name" whenever the
# pod's cgroup parent is a .slice, even with SystemdCgroup = false (critest's
# default parent is /test.slice). runc's cgroupfs driver takes it as a path
# relative to its own cgroup (the shim's); husk does the same and warns.
@test "CRI: a .slice cgroup parent with SystemdCgroup = false: slice:prefix:name is a relative cgroupfs path" {
	[ "${CONTAINERD_SYSTEMD_CGROUP:-false}" = false ] || skip "SystemdCgroup = true: the systemd driver takes this form"
	local st pid cgpath shim_cg line log
	POD_PARENT="/$CGROUP_PARENT.slice"
	pod_up p7
	container_up p7 sleep 1000
	st="$(cri status "$CTR")"
	cgpath="$(jq -r .info.runtimeSpec.linux.cgroupsPath <<<"$st")"
	[ "$cgpath" = "$CGROUP_PARENT.slice:cri-containerd:$CTR" ] || fail "cgroupsPath: $cgpath"
	pid="$(jq -r .info.pid <<<"$st")"
	# The shim of the pod is the parent of the container's init; on v1 the
	# memory hierarchy's line of /proc/PID/cgroup, on v2 the "0::" one.
	local ctl=memory limit=memory.limit_in_bytes dir=/sys/fs/cgroup/memory
	[ -d "$dir" ] || ctl="" limit=memory.max dir=/sys/fs/cgroup
	shim_cg="$(sed -n "s/^[0-9]*:$ctl://p" "/proc/$(ps -o ppid= -p "$pid" | tr -d ' ')/cgroup")"
	line="$(sed -n "s/^[0-9]*:$ctl://p" "/proc/$pid/cgroup")"
	[ "$line" = "${shim_cg%/}/$cgpath" ] || fail "cgroup of $pid: $line, want ${shim_cg%/}/$cgpath"
	run -0 cri update --memory 67108864 "$CTR"
	run -0 cat "$dir$line/$limit"
	[ "$output" = 67108864 ] || fail "$limit of $line: $output"
	if "$CLIENT_RUNTIME" --version | grep -q '^husk version'; then
		log="$SUITE_DIR/state/io.containerd.runtime.v2.task/k8s.io/$CTR/log.json"
		grep -q 'is the systemd slice:prefix:name form, but the cgroupfs driver is in use' "$log" ||
			fail "no warning in $log: $(cat "$log")"
	fi
	run -0 cri stopp "$POD"
	run -0 cri rmp "$POD"
	[ ! -d "$dir$line" ] || fail "cgroup $line left after RemovePodSandbox"
}

@test "zz: containerd stops and nothing is left behind" {
	local veths
	containerd_stop "$SUITE_DIR"
	veths="$(ip -o link show master hcri0 2>/dev/null || true)"
	[ -z "$veths" ] || fail "veths still on hcri0: $veths"
	# The bridge plugin never deletes its bridge; the suite does.
	ip link delete hcri0 2>/dev/null || true
	remove_cgroup_parent "$CGROUP_PARENT"
	assert_nothing_left "$SUITE_DIR" "$CGROUP_PARENT"
}
