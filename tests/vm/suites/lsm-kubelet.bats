#!/usr/bin/env bats
# The LSM guests of the VM lane (c: AppArmor, d: SELinux) as a Kubernetes
# node runs them: a standalone kubelet (static pods, no API server;
# tests/clients/kubelet.bash) on containerd 2.x's CRI (prebuilt on the host
# by tests/clients/build.sh and copied in by run.sh, as for kubelet.bats in
# setup a), cgroupfs driver (no systemd here). A standalone kubelet has no
# RuntimeClass (it sends every pod to containerd's default handler), so each
# runtime gets a node of its own, one kubelet start each: Debian's runc
# 1.1.5 first, then husk, with the same pods and the same checks: the label
# of each container's pid 1 and of an ExecSync'd process, the context= of
# /dev in its mountinfo (SELinux), an operation the profile or the policy
# denies, and nothing left once kubelet has removed the pods.
#   c  securityContext.appArmorProfile: RuntimeDefault from the pod
#      (containerd's cri-containerd.apparmor.d: its `deny mount` holds with
#      CAP_SYS_ADMIN), Unconfined on a container (the same mount works), and
#      Localhost with the lane's husk-vm-deny, loaded here (its deny rule)
#   d  enable_selinux = true and a pod with seLinuxOptions level s0:c1,c2:
#      container_t and container_file_t at that level in containerd's spec,
#      on the sandbox, the container and an exec; enforcing, the container
#      writes its own file but not a shadow_t one bound in by a hostPath

# containerd 2.x from HUSK_TOOLS_DIR: set before the helpers put it on PATH.
HUSK_CONTAINERD_DIR="${HUSK_TOOLS_DIR:-}/containerd2"
load ../../clients/kubelet
load lsm_client_helpers

LEVEL=s0:c1,c2

# Every test skips, saying why, outside its LSM guest or without kubelet
# (bats 1.8's skip in setup_file fails the file instead).
setup_file() {
	case "${HUSK_VM_SETUP:-}" in
	c) apparmor_parser -r "$BATS_TEST_DIRNAME/../apparmor/husk-vm-deny" ;;
	d) export CONTAINERD_ENABLE_SELINUX=true ;;
	*) return 0 ;;
	esac
	if ! [ -x "$HUSK_TOOLS_DIR/kubelet" ] || ! [ -x "$HUSK_CONTAINERD_DIR/containerd" ]; then
		export NO_KUBELET
		NO_KUBELET="$(cat "$HUSK_TOOLS_DIR/kubelet.missing" 2>/dev/null ||
			echo "no kubelet or containerd 2.x in $HUSK_TOOLS_DIR (run.sh copies them in with this suite)")"
		return 0
	fi
	runtime_ready
	export CRICLIENT KUBELET="$HUSK_TOOLS_DIR/kubelet" IMAGE_TAR
	CRICLIENT="$(build_criclient)" || fail "cannot find or build criclient"
	IMAGE_TAR="$(build_image_tar)" || fail "cannot build the busybox image"
}

# The test's node, if it did not take it down itself (a failure).
teardown() {
	[ "$(cat /sys/fs/selinux/enforce 2>/dev/null)" != 1 ] || setenforce 0
	[ -d "${SUITE_DIR:-}" ] || return 0
	kubelet_stop "$SUITE_DIR"
	containerd_stop "$SUITE_DIR"
	clean_leaks "$SUITE_DIR" "$(basename "$(kube_cgroup_root "$SUITE_DIR")")"
	kube_cleanup "$SUITE_DIR"
	rm -rf "$SUITE_DIR"
}

# on SETUP: skip a test of another setup, or when kubelet is missing.
on() {
	[ "${HUSK_VM_SETUP:-}" = "$1" ] || skip "setup $1's test (this is '${HUSK_VM_SETUP:-not a guest}')"
	[ -z "${NO_KUBELET:-}" ] || skip "$NO_KUBELET"
}

# node_up RUNTIME: a containerd whose CRI's default handler runs RUNTIME,
# the busybox image imported, and a kubelet on it.
node_up() {
	RT_NAME="$(basename "$1")" CLIENT_RUNTIME="$1"
	export SUITE_DIR
	SUITE_DIR="$(new_suite_dir)"
	containerd_start "$SUITE_DIR" cri
	ctr --address "$SUITE_DIR/c.sock" -n k8s.io images import "$IMAGE_TAR" >/dev/null ||
		fail "ctr -n k8s.io images import $IMAGE_TAR failed"
	kubelet_start "$SUITE_DIR"
}

# node_down POD...: remove the pods' manifests; once kubelet has stopped
# them, stop kubelet and containerd: no pod cgroup, sysctl, mount, netns,
# shim, CNI lease or cgroup may be left.
node_down() {
	local p leaks
	rm -f "$SUITE_DIR"/manifests/*.yaml
	for p in "$@"; do
		wait_until 90 pod_gone "$p" || fail "$RT_NAME: pod $p still there"
	done
	wait_until 60 no_pod_cgroups "$SUITE_DIR" || true
	kubelet_stop "$SUITE_DIR"
	containerd_stop "$SUITE_DIR"
	ip link delete hcri0 2>/dev/null || true
	# Pod cgroups, sysctls and iptables chains must be right; the links of
	# /var/log/containers and /var/lib/kubelet (which kubelet's GC removes
	# later), and its cgroup root, the suite takes back.
	leaks="$(kube_leaks "$SUITE_DIR" | grep -v -e '^link ' -e '^file ' || true)"
	kube_cleanup "$SUITE_DIR"
	[ -z "$leaks" ] || fail "$RT_NAME: kubelet left: $leaks"
	assert_nothing_left "$SUITE_DIR" "$(basename "$(kube_cgroup_root "$SUITE_DIR")")"
}

# ctr_yaml NAME SECURITY-CONTEXT [MORE]: a container of the busybox image
# that sleeps, with that securityContext (a YAML flow map).
ctr_yaml() {
	printf -- '- name: %s\n  image: %s\n  imagePullPolicy: Never\n  command: [sleep, "1000"]\n  securityContext: %s\n%s' \
		"$1" "$IMAGE_REF" "$2" "${3:+$3
}"
}

# kube_labelled POD CONTAINER WANT: the container runs on the node's
# runtime (its state is in that runtime's root), and its pid 1 and an
# ExecSync'd process run as WANT; sets CTR and PID.
kube_labelled() {
	local got
	CTR="$(ctr_id "$1" "$2")" || fail "$RT_NAME: no running container $2 in pod $1"
	"$CLIENT_RUNTIME" --root "$SUITE_DIR/runc/k8s.io" state "$CTR" >/dev/null ||
		fail "$RT_NAME does not hold container $2 ($CTR)"
	PID="$(cri status "$CTR" | jq -r .info.pid)"
	got="$(lsm_attr "/proc/$PID/attr/current")"
	[ "$got" = "$3" ] || fail "$RT_NAME: $2's pid 1 ($PID) runs as '$got', want '$3'"
	run -0 cri exec "$CTR" cat /proc/self/attr/current
	[ "${output//$'\0'/}" = "$3" ] || fail "$RT_NAME: a process exec'd into $2 runs as '$output', want '$3'"
}

# check_apparmor RUNTIME: one pod, RuntimeDefault from the pod's
# securityContext, Unconfined and Localhost on two of its containers.
check_apparmor() {
	node_up "$1"
	pod_add aa "terminationGracePeriodSeconds: 1
securityContext: {appArmorProfile: {type: RuntimeDefault}}
containers:
$(ctr_yaml dflt '{capabilities: {add: [SYS_ADMIN]}}')
$(ctr_yaml unconf '{appArmorProfile: {type: Unconfined}, capabilities: {add: [SYS_ADMIN]}}')
$(ctr_yaml local '{appArmorProfile: {type: Localhost, localhostProfile: husk-vm-deny}}')"
	wait_pod aa 180 '[.status.containerStatuses[] | .state.running and .containerID] | length == 3 and all'
	kube_labelled aa dflt "cri-containerd.apparmor.d (enforce)"
	run cri exec "$CTR" sh -c 'mkdir -p /mnt && mount -t tmpfs none /mnt'
	[ "$status" -ne 0 ] || fail "$RT_NAME: RuntimeDefault let a mount through"
	assert_contains "${output,,}" "permission denied"
	kube_labelled aa unconf unconfined
	run -0 cri exec "$CTR" sh -c 'mkdir -p /mnt && mount -t tmpfs none /mnt'
	kube_labelled aa local "husk-vm-deny (enforce)"
	run cri exec "$CTR" sh -c 'echo x >/husk-denied'
	[ "$status" -ne 0 ] || fail "$RT_NAME: the Localhost profile's deny rule did not hold"
	assert_contains "$output" "Permission denied"
	run -0 cri exec "$CTR" sh -c 'echo x >/husk-allowed'
	node_down aa
}

@test "kubelet (runc), AppArmor: RuntimeDefault (its deny mount holds), Unconfined and a Localhost profile on pid 1 and ExecSync" {
	on c
	check_apparmor /usr/sbin/runc
}

@test "kubelet (husk), AppArmor: RuntimeDefault (its deny mount holds), Unconfined and a Localhost profile on pid 1 and ExecSync" {
	on c
	check_apparmor "$HUSK_CLIENT_RUNTIME"
}

# check_selinux RUNTIME: a pod with seLinuxOptions level LEVEL: the spec's
# labels, the sandbox's and the container's pid 1, an exec, /dev's
# context=; enforcing, the container writes its own file, not a shadow_t one
# (a hostPath: kubelet does not relabel those).
check_selinux() {
	local pl="system_u:system_r:container_t:$LEVEL" ml="system_u:object_r:container_file_t:$LEVEL" spec line n got f
	node_up "$1"
	f="$SUITE_DIR/shadow"
	echo >"$f"
	chcon system_u:object_r:shadow_t:s0 "$f"
	pod_add se "terminationGracePeriodSeconds: 1
securityContext: {seLinuxOptions: {level: \"$LEVEL\"}}
volumes: [{name: shadow, hostPath: {path: $f, type: File}}]
containers:
$(ctr_yaml c '{}' '  volumeMounts: [{name: shadow, mountPath: /other}]')"
	wait_pod se 180 '.status.containerStatuses[0] | .state.running and .containerID'
	kube_labelled se c "$pl"
	got="$(lsm_attr "/proc/$(cri pstatus "$(cri status "$CTR" | jq -r .info.sandboxID)" | jq -r .info.pid)/attr/current")"
	[ "$got" = "$pl" ] || fail "$RT_NAME: the pod's sandbox runs as '$got', want '$pl'"
	spec="$(cri status "$CTR" | jq -c '[.info.runtimeSpec.process.selinuxLabel, .info.runtimeSpec.linux.mountLabel]')"
	[ "$spec" = "[\"$pl\",\"$ml\"]" ] || fail "$RT_NAME: containerd's spec has the labels $spec"
	line="$(cri exec "$CTR" cat /proc/self/mountinfo | awk '$5 == "/dev"')"
	[[ "$line" == *"context=\"$ml\""* ]] || fail "$RT_NAME: /dev is not mounted with context=\"$ml\": $line"
	run -0 cri exec "$CTR" sh -c 'echo x >/mine && echo x >/other'
	n="$(denials_of "$pl")"
	setenforce 1
	run cri exec "$CTR" sh -c 'echo x >>/mine || exit 3; echo x >>/other 2>/dev/null && exit 4; exit 0'
	setenforce 0
	[ "$status" -eq 0 ] || fail "$RT_NAME, enforcing: status $status, want 0 (its own file written, shadow_t's refused): $output"
	[ "$(denials_of "$pl")" -gt "$n" ] || fail "$RT_NAME: no denial of $pl's write to shadow_t in the kernel's log"
	node_down se
}

@test "kubelet (runc), SELinux: enable_selinux and a pod's seLinuxOptions label the sandbox, pid 1, ExecSync and /dev; enforcing confines" {
	on d
	check_selinux /usr/sbin/runc
}

@test "kubelet (husk), SELinux: enable_selinux and a pod's seLinuxOptions label the sandbox, pid 1, ExecSync and /dev; enforcing confines" {
	on d
	check_selinux "$HUSK_CLIENT_RUNTIME"
}
