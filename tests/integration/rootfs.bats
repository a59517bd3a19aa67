#!/usr/bin/env bats
# The rootfs built as runc builds it (issue 16): bind flags exactly as
# asked, bind sources opened outside the user namespace and in order,
# relative destinations, tmpfs modes and tmpcopyup, a read-only /dev,
# rootfsPropagation, no or a joined mount namespace, proc and sysfs only
# on real directories, and --no-pivot without a whole proc left behind.

load helpers
load mounts_helpers

setup() {
	setup_husk
	SRC="$TEST_DIR/src"
	mkdir -p "$SRC"
	echo data >"$SRC/file"
}

teardown() {
	undo_host_mounts
	teardown_husk
}

# add_mount JSON: append one entry to mounts ($src is $SRC).
add_mount() {
	update_config --arg src "$SRC" ".mounts += [$1]"
}

# mount_opts DEST: the per-mount options of DEST in $output (mountinfo lines).
mount_opts() {
	awk -v d="$1" '$5 == d {print $6}' <<<"$output" | tail -1
}

# ------------------------------------------------------------ bind mounts ---

@test "bind flags: bind,nosuid,nodev of a read-only source is read-write" {
	host_mount --bind "$SRC" "$SRC"
	mount -o remount,bind,ro "$SRC"
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["bind", "nosuid", "nodev"]}'
	in_container 'touch /data/x && echo rw; grep " /data " /proc/self/mountinfo'
	[ "$(head -1 <<<"$output")" = rw ] || fail "output: $output"
	assert_contains "$(mount_opts /data)" rw nosuid nodev
}

@test "bind flags: relatime and strictatime replace a noatime source's mode, nothing else carries over" {
	host_mount --bind "$SRC" "$SRC"
	mount -o remount,bind,ro,nosuid,noatime "$SRC"
	add_mount '{destination: "/rel", type: "bind", source: $src, options: ["bind", "relatime"]}'
	add_mount '{destination: "/strict", type: "bind", source: $src, options: ["bind", "strictatime"]}'
	in_container 'cat /proc/self/mountinfo'
	local rel strict
	rel="$(mount_opts /rel)" strict="$(mount_opts /strict)"
	[[ ",$rel," == *,relatime,* && ",$rel," != *,noatime,* ]] || fail "/rel: $rel"
	[[ ",$strict," != *,relatime,* && ",$strict," != *,noatime,* ]] || fail "/strict: $strict"
	[[ ",$rel,$strict," != *,ro,* && ",$rel,$strict," != *,nosuid,* ]] || fail "the source's ro or nosuid carried over: $rel $strict"
}

@test "bind flags: flags locked in a user namespace are kept" {
	userns_100k
	host_mount --bind "$SRC" "$SRC"
	mount -o remount,bind,ro,nosuid "$SRC"
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["bind", "nodev"]}'
	in_container 'touch /data/x 2>/dev/null && echo rw || echo ro; grep " /data " /proc/self/mountinfo'
	[ "$(head -1 <<<"$output")" = ro ] || fail "output: $output"
	assert_contains "$(mount_opts /data)" ro nosuid nodev
}

@test "bind flags: a flag locked in a user namespace that cannot be honoured fails, naming the mount, as runc" {
	userns_100k
	host_mount --bind "$SRC" "$SRC"
	mount -o remount,bind,nodiratime "$SRC"
	# nodiratime is locked: strictatime cannot replace it.
	add_mount '{destination: "/data", type: "bind", source: $src, options: ["bind", "strictatime"]}'
	local id
	id="$(new_id)"
	create_fails "$id"
	assert_contains "$stderr" "mounts[7]: error mounting \"$SRC\" to rootfs at \"/data\"" \
		"cannot change the atime flags locked on the source (nodiratime" "to strictatime" "operation not permitted"
	assert_no_container "$id"
	# ro is locked: rw asked explicitly cannot clear it.
	mount -o remount,bind,ro "$SRC"
	update_config '.mounts[7].options = ["bind", "rw"]'
	create_fails "$id"
	assert_contains "$stderr" "mounts[7]: error mounting" "cannot clear flags locked on the source (ro)" "operation not permitted"
	assert_no_container "$id"
}

@test "bind sources: a source the container's mapped user cannot reach still mounts" {
	userns_100k
	mkdir -p "$SRC/secret/dir"
	echo hidden >"$SRC/secret/dir/f"
	chmod 0700 "$SRC/secret"
	update_config --arg s "$SRC/secret/dir" '.mounts += [{destination: "/data", type: "bind", source: $s, options: ["rbind"]}]'
	in_container 'cat /data/f'
	[ "$output" = hidden ] || fail "output: $output"
}

@test "bind sources: each source is resolved after the mounts before it" {
	userns_100k
	mkdir -p "$SRC/locked"
	echo inner >"$SRC/locked/f"
	chmod 0700 "$SRC/locked"
	mkdir -p "$BUNDLE/rootfs/early"
	# The second source lies inside the first mount, as the container sees it.
	update_config --arg s "$SRC/locked" --arg r "$BUNDLE/rootfs/early/f" \
		'.mounts += [{destination: "/early", type: "bind", source: $s, options: ["rbind"]},
			{destination: "/late", type: "bind", source: $r, options: ["bind"]}]'
	in_container 'cat /late'
	[ "$output" = inner ] || fail "output: $output"
}

# mount_order [userns] [idmap]: runc's mount-order test, in a bundle of
# runc spec. Binds of bind-src/{a,b,c} (two through symlinks outside the
# rootfs) build a tree under /mnt; then three rbinds take their sources
# from that tree, by host path ($ROOTFS/mnt/x), destinations given by host
# path too: each source must be what the mounts before it made, so the
# file read at the end is a/x's. idmap: the three are idmapped (mappings
# without ridmap: their top mount only, as runc).
mount_order() {
	runc_spec_config
	update_config '.process.terminal = false'
	[[ " $* " != *" userns "* ]] || userns_100k
	local src="$TEST_DIR/bind-src" r="$BUNDLE/rootfs" d maps='{}'
	[[ " $* " != *" idmap "* ]] ||
		maps='{"uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}], "gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}]}'
	for d in a/x b/y c/z; do
		mkdir -p "$src/$d"
		echo "$d" >"$src/$d/file"
		ln -s "${d%/*}" "$src/sym-${d%/*}"
	done
	# Out of the mapped root's reach: the parent opens them (user ns).
	chmod o-rwx "$src"
	mkdir -p "$r/mnt" "$r/final"
	bind_at() {
		update_config --arg s "$1" --arg d "$2" --arg t "$3" --argjson x "$4" \
			'.mounts += [{source: $s, destination: $d, type: "bind", options: [$t, "rprivate"]} + $x]'
	}
	bind_at "$src/a" /mnt bind '{}'
	bind_at "$src/sym-b" /mnt/x bind '{}'
	bind_at "$src/c" /mnt/x/y bind '{}'
	bind_at "$src/sym-a" /mnt/x/y/z bind '{}'
	bind_at "$r/mnt/x" "$r/mnt/x/y/z/x" rbind "$maps"
	bind_at "$r/mnt/x/y" "$r/mnt/x/y/z" rbind "$maps"
	bind_at "$r/mnt" "$r/final" rbind "$maps"
	in_container 'cat /final/x/y/z/z/x/y/z/x/file'
	[ "$output" = a/x ] || fail "output: $output"
}

@test "bind sources: a source under the rootfs is what the mounts before it made (runc's mount order)" {
	mount_order
}

@test "bind sources: runc's mount order in a user namespace" {
	mount_order userns
}

@test "bind sources: runc's mount order with idmapped sources" {
	mount_order idmap
}

@test "bind sources: runc's mount order with idmapped sources in a user namespace" {
	mount_order userns idmap
}

# evil_links: the image's /mnt/abs and /mnt/rel are symlinks that lead to
# the host's /etc when followed on the host.
evil_links() {
	mkdir -p "$BUNDLE/rootfs/mnt"
	ln -s /etc "$BUNDLE/rootfs/mnt/abs"
	ln -s ../../../../../../../../../../etc "$BUNDLE/rootfs/mnt/rel"
	update_config --arg a "$BUNDLE/rootfs/mnt/abs" --arg r "$BUNDLE/rootfs/mnt/rel" \
		'.mounts += [{destination: "/a", type: "bind", source: $a, options: ["rbind"]},
			{destination: "/r", type: "bind", source: $r, options: ["rbind"]}]'
}

@test "bind sources: a symlink in the image cannot lead a source under the rootfs out of it" {
	evil_links
	in_container 'grep -c "^user:x:1000" /a/passwd /r/passwd; grep -l "^daemon:" /a/passwd /r/passwd || echo no-host-passwd'
	[ "$output" = "$(printf '/a/passwd:1\n/r/passwd:1\nno-host-passwd')" ] || fail "output: $output"
}

@test "bind sources: a symlink in the image cannot lead a source under the rootfs out of it, in a user namespace" {
	userns_100k
	evil_links
	in_container 'grep -c "^user:x:1000" /a/passwd /r/passwd; grep -l "^daemon:" /a/passwd /r/passwd || echo no-host-passwd'
	[ "$output" = "$(printf '/a/passwd:1\n/r/passwd:1\nno-host-passwd')" ] || fail "output: $output"
}

@test "bind sources: a missing source in a user namespace fails, naming the mount" {
	userns_100k
	update_config --arg s "$TEST_DIR/nonexistent" '.mounts += [{destination: "/data", type: "bind", source: $s, options: ["rbind"]}]'
	local id
	id="$(new_id)"
	create_fails "$id"
	assert_contains "$stderr" "mounts[7]: error mounting \"$TEST_DIR/nonexistent\" to rootfs at \"/data\"" "open the source outside the container" "no such file or directory"
	[[ "$stderr" != *"mounts[7]"*"mounts[7]"* ]] || fail "the mount is named twice: $stderr"
	assert_no_container "$id"
}

@test "mounts: a relative destination is taken relative to / with a warning" {
	add_mount '{destination: "data", type: "bind", source: $src, options: ["rbind"]}'
	in_container 'cat /data/file'
	[ "$output" = data ] || fail "output: $output"
	assert_contains "$stderr" 'mounts[7].destination' 'is relative, taken as'
}

# ---------------------------------------------------------- tmpfs and /dev ---

@test "tmpfs: without mode= it takes the covered directory's mode, setgid and sticky too" {
	mkdir -p "$BUNDLE/rootfs/scratch" "$BUNDLE/rootfs/suid"
	chmod 3750 "$BUNDLE/rootfs/scratch"
	chmod 4711 "$BUNDLE/rootfs/suid"
	add_mount '{destination: "/scratch", type: "tmpfs", source: "tmpfs"}'
	add_mount '{destination: "/suid", type: "tmpfs", source: "tmpfs", options: ["size=1m"]}'
	add_mount '{destination: "/fresh", type: "tmpfs", source: "tmpfs"}'
	in_container 'stat -c %a /scratch /suid /fresh; grep -c " /scratch .* tmpfs " /proc/self/mountinfo'
	[ "$output" = "$(printf '3750\n4711\n1777\n1')" ] || fail "output: $output"
}

@test "tmpfs: tmpcopyup starts the tmpfs with a copy of the image's directory" {
	mkdir -p "$BUNDLE/rootfs/seed/sub"
	echo one >"$BUNDLE/rootfs/seed/a"
	echo two >"$BUNDLE/rootfs/seed/sub/b"
	ln -s a "$BUNDLE/rootfs/seed/link"
	chown 1000:1000 "$BUNDLE/rootfs/seed/sub/b"
	chmod 0750 "$BUNDLE/rootfs/seed"
	add_mount '{destination: "/seed", type: "tmpfs", source: "tmpfs", options: ["tmpcopyup"]}'
	in_container 'cat /seed/a /seed/sub/b /seed/link; stat -c "%u %a" /seed/sub/b /seed; echo new >/seed/c; grep -c " /seed .* tmpfs " /proc/self/mountinfo'
	[ "$output" = "$(printf 'one\ntwo\none\n1000 644\n0 750\n1')" ] || fail "output: $output"
	[ ! -e "$BUNDLE/rootfs/seed/c" ] || fail "a write went to the image"
}

@test "/dev: a read-only /dev is made read-only after its submounts" {
	update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]'
	in_container 'grep -E " /dev(/pts|/shm|/mqueue)? " /proc/self/mountinfo | wc -l; touch /dev/x 2>/dev/null && echo rw || echo ro; grep " /dev " /proc/self/mountinfo; echo hi >/dev/null && echo null-ok'
	[ "$(head -1 <<<"$output")" = 4 ] || fail "output: $output"
	[ "$(sed -n 2p <<<"$output")" = ro ] || fail "output: $output"
	assert_contains "$(mount_opts /dev)" ro
	assert_contains "$output" null-ok
}

# ------------------------------------------- propagation and mount namespaces

@test "linux.rootfsPropagation: shared leaves / shared and host mounts show inside" {
	host_mount --bind "$BUNDLE/rootfs" "$BUNDLE/rootfs"
	mount --make-shared "$BUNDLE/rootfs"
	mkdir -p "$BUNDLE/rootfs/mnt/x"
	update_config '.linux.rootfsPropagation = "shared"'
	set_args sleep 1000
	local id
	id="$(new_id)"
	run_bg "$id"
	run -0 husk exec "$id" sh -c "awk '\$5 == \"/\"' /proc/self/mountinfo"
	assert_contains "$output" "shared:"
	host_mount -t tmpfs husk-hostside "$BUNDLE/rootfs/mnt/x"
	run -0 husk exec "$id" grep -c husk-hostside /proc/self/mountinfo
	[ "$output" = 1 ] || fail "the host's mount is not inside: $output"
	husk delete --force "$id"
}

# propagation_word: what findmnt -o PROPAGATION says of / in the
# mountinfo lines in $output: private or shared, then ,slave, ,unbindable.
propagation_word() {
	awk '$5 == "/" { p = "private"; s = ""; u = "";
		for (i = 7; $i != "-"; i++) { if ($i ~ /^shared:/) p = "shared"; if ($i ~ /^master:/) s = ",slave"; if ($i == "unbindable") u = ",unbindable" }
		w = p s u } END { print w }' <<<"$output"
}

@test "linux.rootfsPropagation: slave makes / a slave of the host's shared / (private,slave, as runc; runc spec bundle)" {
	runc_spec_config
	update_config '.process.terminal = false | .linux.rootfsPropagation = "slave"'
	set_args cat /proc/self/mountinfo
	local id
	id="$(new_id)"
	# The host's / made shared, in a mount namespace of the test's own
	# (as runc's test does): the rootfs lies on it, not on a mount of its own.
	run -0 --separate-stderr unshare -m --propagation private sh -c 'mount --make-rshared / && exec "$@"' sh \
		timeout -k 5 "$HUSK_TIMEOUT" "$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$id" </dev/null
	[ "$(propagation_word)" = private,slave ] || fail "propagation of /: $(propagation_word): $output"
	assert_no_container "$id"
}

@test "linux.rootfsPropagation: unbindable makes / unbindable" {
	update_config '.linux.rootfsPropagation = "unbindable"'
	in_container "awk '\$5 == \"/\"' /proc/self/mountinfo"
	assert_contains "$output" "unbindable"
}

@test "linux.namespaces: without a mount namespace root.path is the process's root, nothing is mounted, hooks run (runc spec bundle)" {
	runc_spec_config
	del_ns mount
	update_config --arg out "$TEST_DIR/hook.out" '.process.terminal = false | .linux.maskedPaths = [] | .linux.readonlyPaths = []
		| .hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "cat >\($out)"]}]'
	echo host-only >"$TEST_DIR/marker"
	echo rootfs-only >"$BUNDLE/rootfs/marker"
	mkdir "$BUNDLE/rootfs/only"
	cp "$BUNDLE/rootfs/bin/busybox" "$BUNDLE/rootfs/only/sh"
	local id flag
	for flag in "" --no-pivot; do
		id="$(new_id)"
		# A program that is only in the rootfs, by absolute path.
		set_args /only/sh -c "cat /marker; [ -e $TEST_DIR/marker ] && echo host-visible || echo host-hidden"
		run -0 --separate-stderr husk run $flag --bundle "$BUNDLE" "$id" </dev/null
		[ "$output" = "$(printf 'rootfs-only\nhost-hidden')" ] || fail "husk run $flag: $output"
		assert_contains "$(cat "$TEST_DIR/hook.out")" "\"id\":\"$id\""
		assert_no_container "$id"
		# Nothing was mounted on the host's tree.
		! grep -F "$BUNDLE" /proc/self/mountinfo || fail "husk run $flag left mounts"
	done
}

@test "linux.namespaces: a terminal without a mount namespace is a pty of the host's, no /dev/console mount, as runc" {
	# Not compared with runc 1.1.5 here: it opens /dev/ptmx after the
	# chroot (none in this rootfs), and with the host's /dev bound in, it
	# binds /dev/console on the host's tree (and leaves the mounts).
	del_ns mount
	update_config '.process.terminal = true | .linux.maskedPaths = [] | .linux.readonlyPaths = [] | .root.readonly = false'
	# Its slave is on the host's devpts, which the rootfs lacks: tty(1)
	# cannot name it, but stdio is a terminal.
	set_args sh -c '[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo stdio-is-a-tty'
	local id
	id="$(new_id)"
	SOCK="$TEST_DIR/console.sock"
	start_recvtty -no-stdin
	create_bg "$id" --console-socket "$SOCK"
	husk start "$id" 3>&-
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$RECVTTY_PID" 2>/dev/null || break
		sleep 0.05
	done
	out="$(tr -d '\r' <"$TEST_DIR/tty.out")"
	[ "$out" = stdio-is-a-tty ] || fail "through the console socket: $out"
	# Nothing was mounted on the host's tree.
	! grep -F "$BUNDLE" /proc/self/mountinfo || fail "a terminal without a mount namespace left mounts"
	husk delete --force "$id"
	assert_no_container "$id"
}

@test "linux.namespaces: maskedPaths without a mount namespace are refused" {
	del_ns mount
	local id
	id="$(new_id)"
	create_fails "$id"
	assert_contains "$stderr" "linux.maskedPaths" "without a new mount namespace"
	assert_no_container "$id"
}

@test "linux.namespaces: a mount namespace joined by path builds the rootfs in it" {
	mkdir -p "$TEST_DIR/ns"
	host_mount --bind "$TEST_DIR/ns" "$TEST_DIR/ns"
	mount --make-private "$TEST_DIR/ns"
	touch "$TEST_DIR/ns/mnt"
	unshare --mount="$TEST_DIR/ns/mnt" --propagation private true || fail "unshare --mount"
	HOST_MOUNTS+=("$TEST_DIR/ns/mnt")
	set_ns mount "$TEST_DIR/ns/mnt"
	update_config --arg out "$TEST_DIR/hook.out" '.hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "cat >\($out)"]}]'
	in_container 'readlink /proc/self/ns/mnt; cat /etc/passwd | head -1'
	[ "$output" = "$(printf 'mnt:[%s]\nroot:x:0:0:root:/root:/bin/sh' "$(stat -L -c %i "$TEST_DIR/ns/mnt")")" ] || fail "output: $output"
	[ -s "$TEST_DIR/hook.out" ] || fail "the createRuntime hook did not run"
}

# ------------------------------------------------------------- protections ---

@test "proc: a /proc that is a symlink is refused, nothing mounted through it" {
	rm -rf "$BUNDLE/rootfs/proc"
	mkdir -p "$TEST_DIR/elsewhere"
	ln -s "$TEST_DIR/elsewhere" "$BUNDLE/rootfs/proc"
	local id
	id="$(new_id)"
	create_fails "$id"
	assert_contains "$stderr" "mounts[0]" "/proc" "must be mounted on ordinary directory"
	assert_no_container "$id"
	[ -z "$(ls -A "$TEST_DIR/elsewhere")" ] || fail "proc was mounted through the symlink"
}

@test "sysfs: a /sys that is a symlink is refused" {
	rm -rf "$BUNDLE/rootfs/sys"
	ln -s tmp "$BUNDLE/rootfs/sys"
	local id
	id="$(new_id)"
	create_fails "$id"
	assert_contains "$stderr" "/sys" "must be mounted on ordinary directory"
	assert_no_container "$id"
}

# The kernel lets a nested user namespace mount a fresh proc only while a
# whole proc is mounted somewhere in its mount namespace
# (mount_too_revealing). Under --no-pivot the host's root stays under the
# container's, so husk must detach the host's proc and sysfs from it. The
# container gets every capability root has here (as a privileged one would):
# with runc's default set the nested user namespace cannot even write its
# uid_map, in any runtime.
@test "--no-pivot: a nested user+pid namespace cannot mount a fresh proc" {
	requires_userns
	local id caps
	id="$(new_id)"
	caps="$(husk features | jq -c '[.linux.capabilities[] | select(. != "CAP_SYS_RESOURCE" and . != "CAP_PERFMON" and . != "CAP_BPF" and . != "CAP_CHECKPOINT_RESTORE")]')"
	update_config --argjson c "$caps" '.process.capabilities = {bounding: $c, effective: $c, permitted: $c}'
	set_args sh -c 'unshare -mrpf sh -c "mount -t proc proc /tmp && echo mounted || echo refused" 2>/dev/null'
	run -0 husk run --no-pivot --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = refused ] || fail "output: $output"
	assert_no_container "$id"
}
