#!/usr/bin/env bats
# The AppArmor guest of the VM lane (setup c): Docker 20.10 (Debian's
# docker.io, its binaries copied in by run.sh from the host's install) with
# the cgroupfs driver drives its runc (Debian's 1.1.5) and husk side by
# side (docker_each): dockerd generates and loads docker-default, gives it
# to every container, and the same checks as lsm-podman.bats run for both
# runtimes: the profile of pid 1 and of an exec'd process, its `deny
# mount` holding with CAP_SYS_ADMIN, and the same mount working unconfined.

load ../../clients/helpers
load ../../clients/docker_helpers
load lsm_client_helpers

CLI=docker_
RUN=drun
RM=drm

setup_file() {
	[ "${HUSK_VM_SETUP:-}" = c ] || skip "AppArmor guest only (setup c; this is '${HUSK_VM_SETUP:-not a guest}')"
	runtime_ready
	# run.sh copies the host's docker.io into the data disk.
	[ -x "$HUSK_TOOLS_DIR/docker/dockerd" ] || skip "no dockerd in $HUSK_TOOLS_DIR/docker (the host has no docker.io)"
	export SUITE_DIR DK_NETNS DK_CGROUP DK_NO_IPTABLES DOCKER_CONFIG DOCKERD DOCKER_CLI PATH="$HUSK_TOOLS_DIR/docker:$PATH"
	DOCKERD="$HUSK_TOOLS_DIR/docker/dockerd"
	DOCKER_CLI="$HUSK_TOOLS_DIR/docker/docker"
	SUITE_DIR="$(new_suite_dir)"
	DK_NETNS="$SUITE_DIR/netns"
	DK_CGROUP="hdk$$"
	DOCKER_CONFIG="$SUITE_DIR/cli"
	docker_start
	docker_import_image
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	docker_stop
	docker_clean
	rmdir "/sys/fs/cgroup/$DK_CGROUP" 2>/dev/null || true
	rm -rf "$SUITE_DIR"
}

teardown() {
	local left
	[ -e "$SUITE_DIR/dockerd.pid" ] || return 0
	left="$(docker_ ps -aq 2>/dev/null)"
	[ -z "$left" ] || {
		docker_ rm -f $left >/dev/null 2>&1
		fail "containers left: $left"
	}
}

drm() {
	docker_ rm -f "$@"
}

apparmor_round() {
	RT_NAME="$RT"
	check_client_apparmor "aa-$RT" docker-default
}

@test "docker (runc, husk), AppArmor: docker-default confines pid 1 and an exec; its deny mount holds" {
	docker_each apparmor_round
}

@test "zz: docker, AppArmor guest: nothing is left after the daemon's stop" {
	local leaks
	docker_stop
	docker_remove_made
	rmdir "/sys/fs/cgroup/$DK_CGROUP" 2>/dev/null || true
	leaks="$(docker_leaks)"
	[ ! -d "/sys/fs/cgroup/$DK_CGROUP" ] || leaks="$leaks cgroup /sys/fs/cgroup/$DK_CGROUP"
	if [ -n "${leaks// /}" ]; then
		docker_clean
		fail "left behind: $leaks"
	fi
	rm -rf "$SUITE_DIR"
}
