#!/usr/bin/env bash
# Helpers shared by the mount suites (rootfs.bats, idmap.bats), loaded
# after helpers.bash.

# host_mount ARGS... DIR: mount(8) on the host, undone by
# undo_host_mounts (the suites' teardown), last first.
HOST_MOUNTS=()
host_mount() {
	mount "$@" || fail "mount $*"
	HOST_MOUNTS+=("${!#}")
}

undo_host_mounts() {
	local i
	for ((i = ${#HOST_MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${HOST_MOUNTS[$i]}" 2>/dev/null || umount -l "${HOST_MOUNTS[$i]}" 2>/dev/null || true
	done
	HOST_MOUNTS=()
}

# in_container CMD: husk run `sh -c CMD`, which must succeed and leave no
# container; $output is what it printed, $stderr what husk said.
in_container() {
	local id got err
	id="$(new_id)"
	set_args sh -c "$1"
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	got="$output" err="$stderr"
	assert_no_container "$id"
	output="$got" stderr="$err"
}

# create_fails ID [create flags]: husk create must fail; its stderr is in
# $stderr. Output goes to files, so a container that wrongly started
# cannot hold bats.
create_fails() {
	local id="$1"
	shift
	if husk create --bundle "$BUNDLE" "$@" "$id" </dev/null >"$TEST_DIR/create.out" 2>"$TEST_DIR/create.err" 3>&-; then
		fail "husk create $id succeeded"
		return 1
	fi
	stderr="$(cat "$TEST_DIR/create.err")"
}

# userns_100k: the container gets a new user namespace mapping 0-65535 to
# 100000-165535, and its rootfs belongs to the mapped root.
userns_100k() {
	requires_userns
	set_ns user
	update_config '.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
	chown -R 100000:100000 "$BUNDLE/rootfs"
}
