#!/usr/bin/env bats
# Idmapped mounts (issue 17, part 1): mounts[].uidMappings/gidMappings and
# the idmap/ridmap options, made by the parent with
# mount_setattr(MOUNT_ATTR_IDMAP) on a detached copy of the source.
#
# An idmapped mount shows a file whose owner on disk is a mapping's
# containerID+N as hostID+N: with {containerID: 100000, hostID: 0}, host
# uid 100000+N shows as N.

load helpers
load mounts_helpers

setup() {
	setup_husk
	local major minor
	IFS=. read -r major minor _ <<<"$(uname -r)"
	((major > 5 || (major == 5 && minor >= 12))) || skip "idmapped mounts need Linux 5.12"
	SRC="$TEST_DIR/src"
	mkdir -p "$SRC"
	echo data >"$SRC/f"
	chown 101000:101000 "$SRC/f"
}

teardown() {
	undo_host_mounts
	teardown_husk
}

# MAP100K: on-disk ids 100000-165535 show as 0-65535.
MAP100K='[{containerID: 100000, hostID: 0, size: 65536}]'

# add_idmount DEST OPTIONS-JSON [MAPPING-JSON]: a bind of $SRC at DEST,
# idmapped with MAPPING (none: the option alone, implied mapping).
add_idmount() {
	local maps=""
	[ -n "${3:-}" ] && maps=", uidMappings: $3, gidMappings: $3"
	update_config --arg src "$SRC" --arg d "$1" \
		".mounts += [{destination: \$d, type: \"bind\", source: \$src, options: $2 $maps}]"
}

@test "idmap: host uid 100000+N shows as N through an idmapped bind" {
	add_idmount /data '["bind"]' "$MAP100K"
	add_idmount /same '["rbind", "rprivate"]' "$MAP100K"
	in_container 'stat -c "%u %g" /data/f /same/f; grep " /data " /proc/self/mountinfo'
	[ "$(head -2 <<<"$output")" = "$(printf '1000 1000\n1000 1000')" ] || fail "output: $output"
	assert_contains "$(tail -1 <<<"$output")" idmapped
	[ "$(stat -c %u "$SRC/f")" = 101000 ] || fail "the host's view changed"
}

@test "idmap: a file written inside lands with the mapped host owner" {
	add_idmount /data '["bind"]' "$MAP100K"
	update_config '.process.user = {uid: 1000, gid: 1000}'
	# The kernel refuses writes into a directory whose owner is not mapped.
	chown 100000:100000 "$SRC"
	chmod 0777 "$SRC"
	in_container 'echo x >/data/new && stat -c %u /data/new'
	[ "$output" = 1000 ] || fail "output: $output"
	[ "$(stat -c '%u:%g' "$SRC/new")" = 101000:101000 ] || fail "on the host: $(stat -c '%u:%g' "$SRC/new")"
}

@test "idmap: the same source with two mappings shows two owners" {
	add_idmount /a '["bind"]' "$MAP100K"
	add_idmount /b '["bind"]' '[{containerID: 100000, hostID: 5000, size: 65536}]'
	in_container 'stat -c %u /a/f /b/f'
	[ "$output" = "$(printf '1000\n6000')" ] || fail "output: $output"
}

@test "idmap: ridmap maps the submounts of an rbind, idmap does not" {
	mkdir -p "$SRC/sub"
	mount -t tmpfs -o size=1m husk-idmap-sub "$SRC/sub" || fail "mount a tmpfs on $SRC/sub"
	HOST_MOUNTS+=("$SRC/sub")
	echo sub >"$SRC/sub/g"
	chown 102000 "$SRC/sub/g"
	add_idmount /r '["rbind", "ridmap"]' "$MAP100K"
	add_idmount /n '["rbind", "idmap"]' "$MAP100K"
	in_container 'stat -c %u /r/f /r/sub/g /n/f /n/sub/g'
	[ "$output" = "$(printf '1000\n2000\n1000\n102000')" ] || fail "output: $output"
}

@test "idmap: mappings without ridmap map only the top mount of an rbind, as runc (also in a user namespace)" {
	runc_spec_config
	update_config '.process.terminal = false'
	userns_100k
	mkdir -p "$SRC/sub"
	mount -t tmpfs -o size=1m husk-idmap-sub "$SRC/sub" || fail "mount a tmpfs on $SRC/sub"
	HOST_MOUNTS+=("$SRC/sub")
	echo top >"$SRC/top"
	echo sub >"$SRC/sub/g"
	chown 1000:1000 "$SRC/top"
	chown 100:100 "$SRC/sub/g"
	# On-disk 0-65535 show as 100000-165535, the container's 0-65535.
	add_idmount /n '["rbind"]' '[{containerID: 0, hostID: 100000, size: 65536}]'
	in_container 'stat -c %u:%g /n/top /n/sub/g'
	# The submount is not idmapped: host uid 100 has no id in the
	# container's user namespace (runc: the overflow id).
	[ "$output" = "$(printf '1000:1000\n65534:65534')" ] || fail "output: $output"
}

@test "idmap: an implied mapping follows the container's user namespace" {
	userns_100k
	chown 1000:1000 "$SRC/f"
	add_idmount /plain '["rbind"]'
	add_idmount /mapped '["rbind", "idmap"]'
	in_container 'stat -c %u /plain/f /mapped/f; echo x >/mapped/new'
	[ "$output" = "$(printf '65534\n1000')" ] || fail "output: $output"
	[ "$(stat -c %u "$SRC/new")" = 0 ] || fail "written inside as root, on the host: $(stat -c %u "$SRC/new")"
}

@test "idmap: an implied mapping follows a user namespace joined by path" {
	userns_100k
	chown 1000:1000 "$SRC/f"
	# The user namespace to join: another container's, 0-65535 -> 100000-.
	local holder pid
	holder="$(new_id)"
	cp "$BUNDLE/config.json" "$TEST_DIR/config.json"
	set_args sleep 1000
	run_bg "$holder" || fail "start the holder"
	pid="$(container_pid "$holder")"
	cp "$TEST_DIR/config.json" "$BUNDLE/config.json"
	set_ns user "/proc/$pid/ns/user"
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)'
	add_idmount /mapped '["rbind", "idmap"]'
	in_container 'stat -c %u /mapped/f; readlink /proc/self/ns/user'
	[ "$output" = "$(printf '1000\n%s' "$(readlink "/proc/$pid/ns/user")")" ] || fail "output: $output"
	husk delete --force "$holder"
}

@test "idmap: no mount source fd is left in the container" {
	userns_100k
	add_idmount /a '["rbind", "idmap"]'
	add_idmount /b '["bind"]' "$MAP100K"
	add_idmount /c '["rbind"]'
	in_container 'for f in /proc/1/fd/*; do echo "${f##*/} $(readlink $f)"; done'
	# Beyond stdio only what bats itself passes down: pipes and /dev/null.
	[ "$(awk '$1 > 2 && $2 !~ /^pipe:/ && $2 != "/dev/null"' <<<"$output")" = "" ] ||
		fail "fds beyond stdio in the container: $output"
}

@test "idmap: husk features reports idmapped mounts" {
	run -0 husk features
	[ "$(jq -r '.linux.mountExtensions.idmap.enabled' <<<"$output")" = true ] || fail "output: $output"
}

# -------------------------------------------------------------- bad input ---

@test "idmap: an overlapping mapping is refused, naming the field" {
	local id
	id="$(new_id)"
	add_idmount /data '["bind"]' '[{containerID: 0, hostID: 100000, size: 10}, {containerID: 5, hostID: 200000, size: 10}]'
	create_fails "$id"
	assert_contains "$stderr" "mounts[7].uidMappings[1]" "containerID range 5-14 overlaps entry 0's 0-9"
	assert_no_container "$id"
}

@test "idmap: a mapping beyond the id limit is refused, naming the field" {
	local id
	id="$(new_id)"
	add_idmount /data '["bind"]' '[{containerID: 4294967000, hostID: 0, size: 1000}]'
	create_fails "$id"
	assert_contains "$stderr" "mounts[7].uidMappings[0]" "exceeds the id limit"
	assert_no_container "$id"
}

@test "idmap: idmap on a tmpfs is refused, naming the option" {
	local id
	id="$(new_id)"
	update_config '.mounts += [{destination: "/scratch", type: "tmpfs", source: "tmpfs", options: ["idmap"], uidMappings: [{containerID: 0, hostID: 1000, size: 1}], gidMappings: [{containerID: 0, hostID: 1000, size: 1}]}]'
	create_fails "$id"
	assert_contains "$stderr" "mounts[7].options[0]" "must be a bind mount"
	assert_no_container "$id"
}

@test "idmap: ridmap with idmap is refused" {
	local id
	id="$(new_id)"
	add_idmount /data '["rbind", "idmap", "ridmap"]' "$MAP100K"
	create_fails "$id"
	assert_contains "$stderr" "mounts[7].options[2]" '"ridmap" with "idmap"'
	assert_no_container "$id"
}
