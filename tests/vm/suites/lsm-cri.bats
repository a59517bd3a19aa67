#!/usr/bin/env bats
# The LSM guests of the VM lane (c: AppArmor, d: SELinux), the kubelet path:
# containerd 1.6's CRI plugin (cgroupfs: no systemd there), driven by
# criclient (k8s.io/cri-api, kubelet's client library; kubelet itself runs
# in setup a only), with two runtime handlers side by side: `runc`
# (Debian's 1.1.5) and `husk`. The same checks for both: the label of the
# container's pid 1 and of an ExecSync'd process, the context= of /dev in
# its mountinfo (SELinux), and an operation the profile or policy denies.
#   c  the runtime/default profile (containerd generates and loads
#      cri-containerd.apparmor.d): its `deny mount` holds with CAP_SYS_ADMIN,
#      unconfined the mount works; a Localhost profile (localhost/NAME, the
#      lane's husk-vm-deny) and its deny rule
#   d  enable_selinux = true and a pod with seLinuxOptions level s0:c1,c2:
#      container_t and container_file_t at that level on the sandbox, the
#      container and an exec; enforcing, a write to a shadow_t file refused

load ../../clients/helpers
load lsm_client_helpers

LEVEL=s0:c1,c2

setup_file() {
	case "${HUSK_VM_SETUP:-}" in
	c) apparmor_parser -r "$BATS_TEST_DIRNAME/../apparmor/husk-vm-deny" ;;
	d) export CONTAINERD_ENABLE_SELINUX=true ;;
	*) skip "LSM guests only (setups c and d; this is '${HUSK_VM_SETUP:-not a guest}')" ;;
	esac
	runtime_ready
	export SUITE_DIR CRICLIENT PODS_CGROUP CONTAINERD_CONFIG_EXTRA
	SUITE_DIR="$(new_suite_dir)"
	PODS_CGROUP="hlsmpods$$"
	CRICLIENT="$(build_criclient)" || fail "cannot find or build criclient"
	# The reference runtime beside husk (the default handler).
	CONTAINERD_CONFIG_EXTRA="  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]
    runtime_type = \"io.containerd.runc.v2\"
    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]
      BinaryName = \"/usr/sbin/runc\"
      Root = \"$SUITE_DIR/runc-ref\""
	containerd_start "$SUITE_DIR" cri
	local tar
	tar="$(build_image_tar)" || fail "cannot build the busybox image"
	ctr --address "$SUITE_DIR/c.sock" -n k8s.io images import "$tar" >/dev/null ||
		fail "ctr -n k8s.io images import $tar failed"
	wait_until 60 cri version >/dev/null || fail "the CRI plugin does not answer: $(cri version 2>&1)"
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	containerd_stop "$SUITE_DIR"
	clean_leaks "$SUITE_DIR" "$PODS_CGROUP"
	rm -rf "$SUITE_DIR"
}

setup() {
	PODS_FILE="$BATS_TEST_TMPDIR/pods"
	: >"$PODS_FILE"
}

teardown() {
	local pod
	[ -z "${OTHER_SETUP:-}" ] || return 0
	[ "$(cat /sys/fs/selinux/enforce 2>/dev/null)" != 1 ] || setenforce 0
	[ -e "$SUITE_DIR/containerd.pid" ] || return 0
	for pod in $(cat "$PODS_FILE"); do
		cri stopp "$pod" >/dev/null 2>&1 || true
		cri rmp "$pod" >/dev/null 2>&1 || true
	done
}

cri() {
	timeout -k 5 "$CLIENT_TIMEOUT" "$CRICLIENT" -a "$SUITE_DIR/c.sock" "$@"
}

# on SETUP: skip a test of the other LSM guest (and its teardown's checks).
on() {
	[ "$HUSK_VM_SETUP" != "$1" ] || return 0
	OTHER_SETUP=1
	skip "setup $1's test (this is $HUSK_VM_SETUP)"
}

# pod_up RUNTIME NAME [POD FLAGS...]: a pod sandbox on the runtime handler
# RUNTIME; POD is its id, POD_ARGS its flags (CreateContainer sends them too).
pod_up() {
	local rt="$1" name="$2"
	shift 2
	RT_NAME="$rt"
	POD_ARGS=(--name "$name" --uid "$name-uid" --namespace husk --log-dir "$SUITE_DIR/logs/$name"
		--cgroup-parent "/$PODS_CGROUP" "$@")
	mkdir -p "$SUITE_DIR/logs/$name"
	POD="$(cri runp "${POD_ARGS[@]}" --runtime-handler "$rt")" || fail "RunPodSandbox $name on $rt failed"
	echo "$POD" >>"$PODS_FILE"
}

# container_up NAME [create flags] -- ARGS...: a started container in POD;
# CTR its id, PID its pid 1.
container_up() {
	local name="$1"
	shift
	CTR="$(cri create "${POD_ARGS[@]}" --pod "$POD" --cname "$name" --image "$IMAGE_REF" --log "$name.log" "$@")" ||
		fail "$RT_NAME: CreateContainer $name failed"
	cri start "$CTR" || fail "$RT_NAME: StartContainer $name failed"
	PID="$(cri status "$CTR" | jq -r .info.pid)"
}

# cri_labelled WANT: pid 1 of CTR and an ExecSync'd process run as WANT.
cri_labelled() {
	local got
	got="$(lsm_attr "/proc/$PID/attr/current")"
	[ "$got" = "$1" ] || fail "$RT_NAME: pid 1 ($PID) runs as '$got', want '$1'"
	run -0 cri exec "$CTR" cat /proc/self/attr/current
	[ "${output//$'\0'/}" = "$1" ] || fail "$RT_NAME: an exec'd process runs as '$output', want '$1'"
}

# check_apparmor RUNTIME: runtime/default and its deny mount, unconfined,
# and a Localhost profile, in one pod.
check_apparmor() {
	local rt="$1"
	pod_up "$rt" "aa-$rt"
	container_up dflt --apparmor runtime/default --cap-add SYS_ADMIN -- sleep 1000
	cri_labelled "cri-containerd.apparmor.d (enforce)"
	run cri exec "$CTR" sh -c 'mkdir -p /mnt && mount -t tmpfs none /mnt'
	[ "$status" -ne 0 ] || fail "$rt: runtime/default let a mount through"
	assert_contains "${output,,}" "permission denied"
	container_up unconf --apparmor unconfined --cap-add SYS_ADMIN -- sleep 1000
	cri_labelled unconfined
	run -0 cri exec "$CTR" sh -c 'mkdir -p /mnt && mount -t tmpfs none /mnt'
	container_up local --apparmor localhost/husk-vm-deny -- sleep 1000
	cri_labelled "husk-vm-deny (enforce)"
	run cri exec "$CTR" sh -c 'echo x >/husk-denied'
	[ "$status" -ne 0 ] || fail "$rt: the Localhost profile's deny rule did not hold"
	assert_contains "$output" "Permission denied"
	run -0 cri exec "$CTR" sh -c 'echo x >/husk-allowed'
	run -0 cri stopp "$POD"
	run -0 cri rmp "$POD"
}

@test "CRI (runc), AppArmor: runtime/default (its deny mount holds), unconfined, and a Localhost profile on pid 1 and ExecSync" {
	on c
	check_apparmor runc
}

@test "CRI (husk), AppArmor: runtime/default (its deny mount holds), unconfined, and a Localhost profile on pid 1 and ExecSync" {
	on c
	check_apparmor husk
}

# check_selinux RUNTIME: a pod with seLinuxOptions level LEVEL: the spec's
# labels, the sandbox's and the container's pid 1, an exec, /dev's
# context=; enforcing, the container writes its own file, not a shadow_t one
# bound in (the rootfs, mounted with context=, cannot hold another label).
check_selinux() {
	local rt="$1" pl="system_u:system_r:container_t:$LEVEL" ml="system_u:object_r:container_file_t:$LEVEL" spec line n got
	local f="$SUITE_DIR/shadow-$rt"
	echo >"$f"
	chcon system_u:object_r:shadow_t:s0 "$f"
	pod_up "$rt" "se-$rt" --selinux-level "$LEVEL"
	got="$(lsm_attr "/proc/$(cri pstatus "$POD" | jq -r .info.pid)/attr/current")"
	[ "$got" = "$pl" ] || fail "$rt: the pod's sandbox runs as '$got', want '$pl'"
	container_up c --mount "$f:/other" -- sleep 1000
	spec="$(cri status "$CTR" | jq -c '[.info.runtimeSpec.process.selinuxLabel, .info.runtimeSpec.linux.mountLabel]')"
	[ "$spec" = "[\"$pl\",\"$ml\"]" ] || fail "$rt: containerd's spec has the labels $spec"
	cri_labelled "$pl"
	line="$(cri exec "$CTR" cat /proc/self/mountinfo | awk '$5 == "/dev"')"
	[[ "$line" == *"context=\"$ml\""* ]] || fail "$rt: /dev is not mounted with context=\"$ml\": $line"
	run -0 cri exec "$CTR" sh -c 'echo x >/mine && echo x >/other'
	n="$(denials_of "$pl")"
	setenforce 1
	run cri exec "$CTR" sh -c 'echo x >>/mine || exit 3; echo x >>/other 2>/dev/null && exit 4; exit 0'
	setenforce 0
	[ "$status" -eq 0 ] || fail "$rt, enforcing: status $status, want 0 (its own file written, shadow_t's refused): $output"
	[ "$(denials_of "$pl")" -gt "$n" ] || fail "$rt: no denial of $pl's write to shadow_t in the kernel's log"
	run -0 cri stopp "$POD"
	run -0 cri rmp "$POD"
}

@test "CRI (runc), SELinux: enable_selinux and a pod's seLinuxOptions label the sandbox, pid 1, ExecSync and /dev; enforcing confines" {
	on d
	check_selinux runc
}

@test "CRI (husk), SELinux: enable_selinux and a pod's seLinuxOptions label the sandbox, pid 1, ExecSync and /dev; enforcing confines" {
	on d
	check_selinux husk
}

@test "zz: CRI, LSM guests: containerd stops; no cgroup, netns or veth is left" {
	local veths
	containerd_stop "$SUITE_DIR"
	veths="$(ip -o link show master hcri0 2>/dev/null || true)"
	[ -z "$veths" ] || fail "veths still on hcri0: $veths"
	ip link delete hcri0 2>/dev/null || true
	rmdir "/sys/fs/cgroup/$PODS_CGROUP" 2>/dev/null || true
	assert_nothing_left "$SUITE_DIR" "$PODS_CGROUP"
}
