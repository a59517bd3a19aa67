#!/usr/bin/env bats
# The LSM guests of the VM lane (c: AppArmor, d: SELinux), podman 4.3 with
# its own defaults and the cgroupfs manager (no systemd there), driving
# runc 1.1.5 and husk side by side with the same checks: the label of the
# container's pid 1 (/proc/PID/attr/current) and of an exec'd process,
# the context= of its mounts in its mountinfo (SELinux), and an operation
# the profile or the policy denies.
#   c  podman's containers-default-VERSION profile (podman generates and
#      loads it): its `deny mount` holds even with CAP_SYS_ADMIN, which
#      --security-opt apparmor=unconfined lets through
#   d  podman's default labels (lxc_contexts: container_t, container_file_t,
#      a random MCS pair) and --security-opt label=level:s0:c1,c2; with
#      SELinux enforcing, a write to a shadow_t file bound in is refused
#      (tests/vm/selinux/husk_container.te)

load ../../clients/helpers
load podman_helpers
load lsm_client_helpers

CLI=podman_
RUN=prun
RM=prm

setup_file() {
	case "${HUSK_VM_SETUP:-}" in
	c | d) ;;
	*) skip "LSM guests only (setups c and d; this is '${HUSK_VM_SETUP:-not a guest}')" ;;
	esac
	runtime_ready
	require_cmd podman
	podman_suite_setup cgroupfs
}

teardown_file() {
	podman_suite_teardown
}

setup() { :; }

teardown() {
	[ -z "${OTHER_SETUP:-}" ] || return 0
	[ "$(cat /sys/fs/selinux/enforce 2>/dev/null)" != 1 ] || setenforce 0
	podman_no_containers_left
}

prm() {
	podman_ rm -f -t 0 "$@"
}

# on SETUP: skip a test of the other LSM guest (and its teardown's checks).
on() {
	[ "$HUSK_VM_SETUP" != "$1" ] || return 0
	OTHER_SETUP=1
	skip "setup $1's test (this is $HUSK_VM_SETUP)"
}

# use RUNTIME: podman drives runc or husk.
use() {
	RT_NAME="$1"
	case "$1" in
	runc) PODMAN_RUNTIME=/usr/sbin/runc ;;
	husk) PODMAN_RUNTIME="$CLIENT_RUNTIME" ;;
	esac
}

check_apparmor() {
	use "$1"
	check_client_apparmor "aa-$1" 'containers-default-*'
}

@test "podman (runc), AppArmor: containers-default confines pid 1 and an exec; its deny mount holds" {
	on c
	check_apparmor runc
}

@test "podman (husk), AppArmor: containers-default confines pid 1 and an exec; its deny mount holds" {
	on c
	check_apparmor husk
}

# mount_context_is NAME MOUNTPOINT LABEL: the container sees MOUNTPOINT
# mounted with context="LABEL".
mount_context_is() {
	local line
	line="$(podman_ exec "$1" cat /proc/self/mountinfo | awk -v m="$2" '$5 == m')"
	[[ "$line" == *"context=\"$3\""* ]] || fail "$PODMAN_RUNTIME: $2 is not mounted with context=\"$3\": $line"
}

# check_selinux RUNTIME [LEVEL]: podman's labels (its default MCS pair, or
# label=level:LEVEL) on pid 1, an exec, and the rootfs, /dev and /dev/shm.
# Enforcing, the container writes its own files but not a shadow_t one.
check_selinux() {
	use "$1"
	local n="se-$1${2:+-l}" pl ml cats denials opts=() f="$SUITE_DIR/shadow-$1"
	[ -z "${2:-}" ] || opts=(--security-opt "label=level:$2")
	echo >"$f"
	chcon system_u:object_r:shadow_t:s0 "$f"
	run -0 prun -d --name "$n" -v "$f:/other" "${opts[@]}" "$IMAGE_REF" sleep 1000
	pl="$(podman_ inspect --format '{{.ProcessLabel}}' "$n")"
	ml="$(podman_ inspect --format '{{.MountLabel}}' "$n")"
	cats="${2:-${pl#system_u:system_r:container_t:}}"
	[[ "$cats" =~ ^s0:c[0-9]+,c[0-9]+$ ]] || fail "podman's process label '$pl': no MCS pair"
	[ "$pl" = "system_u:system_r:container_t:$cats" ] || fail "process label '$pl'"
	[ "$ml" = "system_u:object_r:container_file_t:$cats" ] || fail "mount label '$ml'"
	client_labelled "$n" "$pl"
	# The rootfs (podman's overlay mount), the runtime's /dev, and /dev/shm.
	mount_context_is "$n" / "$ml"
	mount_context_is "$n" /dev "$ml"
	mount_context_is "$n" /dev/shm "$ml"
	denials="$(denials_of "$pl")"
	setenforce 1
	run podman_ exec "$n" sh -c 'echo x >>/mine || exit 3; echo x >>/other 2>/dev/null && exit 4; exit 0'
	setenforce 0
	[ "$status" -eq 0 ] || fail "$1, enforcing: status $status, want 0 (its own file written, shadow_t's refused): $output"
	[ "$(denials_of "$pl")" -gt "$denials" ] ||
		fail "$1: no denial of $pl's write to shadow_t in the kernel's log"
	run -0 podman_ rm -f -t 0 "$n"
}

@test "podman (runc), SELinux: default labels (container_t, an MCS pair) on pid 1, an exec and the mounts; enforcing confines" {
	on d
	check_selinux runc
}

@test "podman (husk), SELinux: default labels (container_t, an MCS pair) on pid 1, an exec and the mounts; enforcing confines" {
	on d
	check_selinux husk
}

@test "podman (runc), SELinux: --security-opt label=level:s0:c1,c2 on pid 1, an exec and the mounts; enforcing confines" {
	on d
	check_selinux runc s0:c1,c2
}

@test "podman (husk), SELinux: --security-opt label=level:s0:c1,c2 on pid 1, an exec and the mounts; enforcing confines" {
	on d
	check_selinux husk s0:c1,c2
}

@test "zz: podman (cgroupfs), LSM guests: nothing is left behind" {
	podman_ rmi -af >/dev/null 2>&1 || true
	podman_unmount_storage
	assert_nothing_left "$SUITE_DIR"
}
