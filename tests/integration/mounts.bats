#!/usr/bin/env bats
# config.json mounts and root: bind and filesystem mounts with their flags,
# the recursive (mount_setattr) options, destinations kept inside the
# rootfs, root.readonly, maskedPaths and readonlyPaths.

load helpers

setup() {
	setup_husk
	SRC="$TEST_DIR/src"
	mkdir -p "$SRC/sub"
	echo data >"$SRC/file"
}

teardown() {
	# The test's host submount, if it made one.
	umount "$SRC/sub" 2>/dev/null || true
	umount "$BUNDLE/rootfs" 2>/dev/null || true
	teardown_husk
}

# with_submount: a tmpfs on $SRC/sub, so a recursive bind of $SRC has a
# submount.
with_submount() {
	mount -t tmpfs -o size=1m husk-test "$SRC/sub" || fail "mount tmpfs on $SRC/sub"
}

# add_mount JSON: append one entry to mounts.
add_mount() {
	update_config --arg src "$SRC" ".mounts += [$1]"
}

# in_container CMD: husk run `sh -c CMD`; $output is what it printed.
in_container() {
	local id got
	id="$(new_id)"
	set_args sh -c "$1"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	got="$output"
	assert_no_container "$id"
	output="$got"
}

@test "mounts: a bind mount shows the host directory" {
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["rbind"]}'
	in_container 'cat /data/file'
	[ "$output" = data ] || fail "output: $output"
}

@test "mounts: ro on a bind makes it read-only, not its submounts" {
	with_submount
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["rbind", "ro"]}'
	in_container 'touch /data/x 2>/dev/null && echo top-rw || echo top-ro; touch /data/sub/x 2>/dev/null && echo sub-rw || echo sub-ro'
	[ "$output" = "$(printf 'top-ro\nsub-rw')" ] || fail "output: $output"
}

@test "mounts: rro makes a bind and its submounts read-only" {
	with_submount
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["rbind", "rro"]}'
	in_container 'touch /data/x 2>/dev/null && echo top-rw || echo top-ro; touch /data/sub/x 2>/dev/null && echo sub-rw || echo sub-ro'
	[ "$output" = "$(printf 'top-ro\nsub-ro')" ] || fail "output: $output"
}

@test "mounts: rnosuid, rnodev, rnoexec and rnoatime reach the submounts" {
	with_submount
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["rbind", "rnosuid", "rnodev", "rnoexec", "rnoatime"]}'
	in_container 'grep " /data/sub " /proc/self/mountinfo'
	local o
	o="$(awk '{print $6}' <<<"$output")"
	for f in nosuid nodev noexec noatime; do
		[[ ",$o," == *",$f,"* ]] || fail "submount options $o lack $f: $output"
	done
}

@test "mounts: rnosymfollow stops symlinks in the submounts" {
	with_submount
	ln -s /etc/passwd "$SRC/sub/link"
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["rbind", "rnosymfollow"]}'
	in_container 'cat /data/sub/link >/dev/null 2>&1 && echo followed || echo refused'
	[ "$output" = refused ] || fail "output: $output"
}

@test "mounts: rrw after rro leaves the bind writable" {
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["rbind", "rro", "rrw"]}'
	in_container 'touch /data/x && echo rw'
	[ "$output" = rw ] || fail "output: $output"
}

@test "mounts: tmpfs with size, mode and nosuid, noexec" {
	add_mount '{destination: "/scratch", type: "tmpfs", source: "tmpfs", options: ["nosuid", "noexec", "size=2m", "mode=700"]}'
	in_container 'grep " /scratch " /proc/self/mountinfo; stat -c %a /scratch'
	assert_contains "$output" "nosuid" "noexec" "size=2048k" "mode=700"
	[ "$(tail -1 <<<"$output")" = 700 ] || fail "mode: $output"
}

@test "mounts: nosymfollow on a bind" {
	ln -s /etc/passwd "$SRC/link"
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["bind", "nosymfollow"]}'
	in_container 'cat /data/link >/dev/null 2>&1 && echo followed || echo refused'
	[ "$output" = refused ] || fail "output: $output"
}

@test "mounts: a destination through a symlink stays inside the rootfs" {
	ln -s /tmp/escape "$BUNDLE/rootfs/evil"
	ln -s / "$BUNDLE/rootfs/tmp/escape" 2>/dev/null || true
	add_mount '{destination: "/evil/data", type: "bind", source: $src, options: ["rbind"]}'
	in_container 'cat /tmp/escape/data/file 2>/dev/null || cat /evil/data/file'
	[ "$output" = data ] || fail "output: $output"
	[ ! -e /data/file ] || fail "the mount escaped to the host's /data"
}

@test "mounts: an unknown option goes to the filesystem, which refuses it" {
	local id
	id="$(new_id)"
	add_mount '{destination: "/scratch", type: "tmpfs", source: "tmpfs", options: ["bogusopt"]}'
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "mounts[7]" "/scratch"
	assert_no_container "$id"
}

@test "mounts: idmap without a mapping or a user namespace is refused with the field named" {
	local id
	id="$(new_id)"
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["rbind", "idmap"]}'
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "mounts[7].options[1]" "idmap"
	assert_no_container "$id"
}

@test "root.readonly: / is read-only, a tmpfs on it is not" {
	add_mount '{destination: "/scratch", type: "tmpfs", source: "tmpfs"}'
	in_container 'touch /x 2>/dev/null && echo root-rw || echo root-ro; touch /scratch/x && echo tmp-rw'
	[ "$output" = "$(printf 'root-ro\ntmp-rw')" ] || fail "output: $output"
}

@test "root.readonly: false leaves / writable" {
	update_config '.root.readonly = false'
	in_container 'touch /x && echo rw'
	[ "$output" = rw ] || fail "output: $output"
}

@test "linux.maskedPaths: a masked file reads empty, a masked dir is empty" {
	update_config '.linux.maskedPaths = ["/etc/passwd", "/home"]'
	in_container 'wc -c </etc/passwd; ls /home | wc -l'
	[ "$output" = "$(printf '0\n0')" ] || fail "output: $output"
}

@test "linux.readonlyPaths: a path is read-only" {
	update_config '.root.readonly = false | .linux.readonlyPaths = ["/home"]'
	in_container 'touch /home/x 2>/dev/null && echo rw || echo ro; touch /tmp/x && echo tmp-rw'
	[ "$output" = "$(printf 'ro\ntmp-rw')" ] || fail "output: $output"
}

# shared_rootfs: the rootfs becomes a shared mount of the host, so what
# the container's / is to it shows in mountinfo.
shared_rootfs() {
	mount --bind "$BUNDLE/rootfs" "$BUNDLE/rootfs" && mount --make-shared "$BUNDLE/rootfs" ||
		fail "make $BUNDLE/rootfs a shared mount"
}

@test "linux.rootfsPropagation: rslave makes / a slave of the host's mount" {
	shared_rootfs
	update_config '.linux.rootfsPropagation = "rslave"'
	in_container "awk '\$5 == \"/\"' /proc/self/mountinfo"
	assert_contains "$output" "master:"
}

@test "linux.rootfsPropagation: private leaves / with no peer" {
	shared_rootfs
	update_config '.linux.rootfsPropagation = "private"'
	in_container "awk '\$5 == \"/\"' /proc/self/mountinfo"
	[[ "$output" != *master:* && "$output" != *shared:* ]] || fail "mountinfo: $output"
}

@test "mounts: a tmpfs on / with tmpcopyup over a rootfs holding a dangling symlink, as crun" {
	ln -s /no/such/target "$BUNDLE/rootfs/dangling"
	update_config '.root.readonly = false | .mounts = [{destination: "/", type: "tmpfs", source: "tmpfs", options: ["tmpcopyup"]}] + .mounts'
	set_args sh -c 'readlink /dangling; touch /new && echo written; grep " / " /proc/self/mountinfo | grep -c tmpfs'
	local id
	id="$(new_id)"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = /no/such/target ] || fail "symlink: $output"
	[ "${lines[1]}" = written ] || fail "write: $output"
	[ "${lines[2]}" -ge 1 ] || fail "/ is not a tmpfs: $output"
	[ ! -e "$BUNDLE/rootfs/new" ] || fail "the write reached the rootfs below the tmpfs"
}

@test "mounts: a bind mount whose destination is / replaces the rootfs, as crun" {
	cp -a "$BUNDLE/rootfs" "$TEST_DIR/other"
	echo from-the-bind >"$TEST_DIR/other/marker"
	update_config --arg s "$TEST_DIR/other" '.mounts = [{destination: "/", type: "bind", source: $s, options: ["rbind"]}] + .mounts'
	set_args sh -c 'cat /marker; echo pid $$'
	local id
	id="$(new_id)"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = from-the-bind ] || fail "not the bind's tree: $output"
	[ "${lines[1]}" = "pid 1" ] || fail "$output"
}
