# Shared by the VM lane's podman suites (clients-podman.bats in setup a,
# lsm-podman.bats in the LSM guests c and d): podman on its own root,
# runroot, tmpdir, events file and network config under SUITE_DIR, with
# the busybox image imported as IMAGE_REF. The caller loads
# ../../clients/helpers first.
#
# PODMAN_CGROUP_MANAGER  systemd (setup a) or cgroupfs (no systemd)
# PODMAN_RUNTIME         the OCI runtime podman drives (default: the one
#                        under test, CLIENT_RUNTIME)

# podman_suite_setup MANAGER: the suite's private podman, image imported.
podman_suite_setup() {
	export SUITE_DIR CONTAINERS_CONF CONTAINERS_STORAGE_CONF PODMAN_CGROUP_MANAGER="$1"
	SUITE_DIR="$(new_suite_dir)"
	CONTAINERS_CONF="$SUITE_DIR/containers.conf"
	CONTAINERS_STORAGE_CONF="$SUITE_DIR/storage.conf"
	mkdir -p "$SUITE_DIR"/{root,runroot,tmp,cni}
	cat >"$CONTAINERS_CONF" <<-EOC
		[containers]
		default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
		log_driver = "k8s-file"
		seccomp_profile = "/usr/share/containers/seccomp.json"
		cgroups = "enabled"
		[engine]
		cgroup_manager = "$PODMAN_CGROUP_MANAGER"
		events_logger = "file"
		events_logfile_path = "$SUITE_DIR/events.log"
		tmp_dir = "$SUITE_DIR/tmp"
		static_dir = "$SUITE_DIR/root/libpod"
		volume_path = "$SUITE_DIR/root/volumes"
		[network]
		network_config_dir = "$SUITE_DIR/cni"
	EOC
	cat >"$CONTAINERS_STORAGE_CONF" <<-EOC
		[storage]
		driver = "overlay"
		graphroot = "$SUITE_DIR/root"
		runroot = "$SUITE_DIR/runroot"
	EOC
	local rootfs
	rootfs="$(build_rootfs)" || fail "cannot build the busybox rootfs"
	tar -C "$rootfs" --exclude=./.complete -cf "$SUITE_DIR/rootfs.tar" . ||
		fail "cannot tar $rootfs"
	podman_ import --change 'CMD=["sh"]' "$SUITE_DIR/rootfs.tar" "$IMAGE_REF" >/dev/null ||
		fail "podman import failed"
}

# podman_unmount_storage: the overlay mounts podman left in its root.
podman_unmount_storage() {
	grep -F " $SUITE_DIR/root/overlay " /proc/self/mountinfo | awk '{print $5}' |
		while read -r m; do umount "$m" 2>/dev/null || true; done
}

# podman_suite_teardown: every container and image gone, the suite dir too.
podman_suite_teardown() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	podman_ rm -af -t 0 >/dev/null 2>&1 || true
	podman_ rmi -af >/dev/null 2>&1 || true
	podman_unmount_storage
	clean_leaks "$SUITE_DIR"
	rm -rf "$SUITE_DIR"
}

# podman_no_containers_left: fail (after removing them) if a test left any.
podman_no_containers_left() {
	local left
	left="$(podman_ ps -aq 2>/dev/null)"
	[ -z "$left" ] || {
		podman_ rm -af -t 0 >/dev/null 2>&1
		fail "containers left: $left"
	}
}

podman_() {
	timeout -k 5 "$CLIENT_TIMEOUT" podman --runtime "${PODMAN_RUNTIME:-$CLIENT_RUNTIME}" \
		--root "$SUITE_DIR/root" --runroot "$SUITE_DIR/runroot" --tmpdir "$SUITE_DIR/tmp" \
		--cgroup-manager "$PODMAN_CGROUP_MANAGER" --events-backend file "$@"
}

prun() {
	podman_ run --network none "$@"
}
