# Shared by the LSM guests' client suites (lsm-podman.bats, lsm-docker.bats):
# the same checks whichever client starts the container and whichever
# runtime it drives. The suite sets CLI, the client's command function
# (podman_, docker_), RUN its `run` with the runtime of this round (prun,
# drun), RM its forced `rm` without a stop timeout, and RT_NAME, that
# runtime's name for messages.

lsm_attr() {
	tr -d '\0\n' <"$1"
}

# client_labelled NAME WANT: the container's pid 1 (as the host sees it)
# and a process exec'd into it run as WANT; sets PID.
client_labelled() {
	local got
	PID="$($CLI inspect --format '{{.State.Pid}}' "$1")"
	got="$(lsm_attr "/proc/$PID/attr/current")"
	[ "$got" = "$2" ] || fail "$RT_NAME: pid 1 ($PID) runs as '$got', want '$2'"
	run -0 $CLI exec "$1" cat /proc/self/attr/current
	[ "${output//$'\0'/}" = "$2" ] || fail "$RT_NAME: an exec'd process runs as '$output', want '$2'"
}

# check_client_apparmor NAME PROFILE: the client gives its container its
# default AppArmor profile PROFILE (a glob) on pid 1 and an exec; the
# profile's `deny mount` holds although the container has CAP_SYS_ADMIN,
# and with apparmor=unconfined the same mount works (the profile, not the
# capabilities or seccomp, refused it).
check_client_apparmor() {
	local n="$1" profile
	run -0 $RUN -d --name "$n" --cap-add SYS_ADMIN "$IMAGE_REF" sleep 1000
	profile="$($CLI inspect --format '{{.AppArmorProfile}}' "$n")"
	# shellcheck disable=SC2053 # $2 is a glob
	[[ "$profile" == $2 ]] || fail "$RT_NAME: the client gave the profile '$profile', want $2"
	client_labelled "$n" "$profile (enforce)"
	run $CLI exec "$n" sh -c 'mkdir -p /mnt && mount -t tmpfs none /mnt'
	[ "$status" -ne 0 ] || fail "$RT_NAME: the profile let a mount through"
	assert_contains "${output,,}" "permission denied"
	run -0 $RM "$n"
	run -0 $RUN --rm --cap-add SYS_ADMIN --security-opt apparmor=unconfined "$IMAGE_REF" \
		sh -c 'mkdir -p /mnt && mount -t tmpfs none /mnt && cat /proc/self/attr/current'
	[ "${output//$'\0'/}" = unconfined ] || fail "$RT_NAME, apparmor=unconfined: $output"
}

# denials_of LABEL: how many writes of LABEL to shadow_t the kernel refused
# (the SELinux guest's enforcing checks count them before and after).
denials_of() {
	dmesg | grep -F "tcontext=system_u:object_r:shadow_t:s0" | grep -F "scontext=$1 " | grep -c permissive=0 || true
}
