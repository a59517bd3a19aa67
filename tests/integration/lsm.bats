#!/usr/bin/env bats
# The LSM fields (process.apparmorProfile, process.selinuxLabel,
# linux.mountLabel, exec's --apparmor, --process-label and --process) on a
# host without AppArmor and SELinux: each refused naming the field and the
# value, with nothing left (state dir, cgroup, mounts, exec'd process). A
# malformed SELinux label is refused on any host, before SELinux is asked.
# What the LSMs do with them is proven in the VM lane's LSM guests.

load helpers

no_apparmor() {
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ] || skip "this host has AppArmor"
}

no_selinux() {
	[ ! -e /sys/fs/selinux/enforce ] || skip "this host has SELinux"
}

# refused MSG...: create fails naming MSG and leaves nothing: no state dir
# (create_fails_with), no cgroup (the config's cgroupsPath is named for
# this call, so a leak cannot be another test's) and no mount of the
# bundle's on the host.
refused() {
	local cg
	cg="lsm-$(new_id)"
	update_config --arg p "/$cg" '.linux.cgroupsPath = $p'
	create_fails_with "$@"
	[ -z "$(find /sys/fs/cgroup -maxdepth 3 -name "$cg" 2>/dev/null)" ] ||
		fail "cgroups left: $(find /sys/fs/cgroup -maxdepth 3 -name "$cg")"
	! grep -F "$BUNDLE" /proc/self/mountinfo || fail "mounts left on the host"
}

@test "lsm: process.apparmorProfile refused on a host without AppArmor" {
	no_apparmor
	update_config '.process.apparmorProfile = "husk-test"'
	refused 'process.apparmorProfile: "husk-test": AppArmor is not enabled on this host'
}

@test "lsm: process.selinuxLabel refused on a host without SELinux, in runc's words" {
	no_selinux
	update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0:c1,c2"'
	refused 'process.selinuxLabel: "system_u:system_r:container_t:s0:c1,c2": selinux label is specified in config, but selinux is disabled or not supported'
}

@test "lsm: linux.mountLabel refused on a host without SELinux" {
	no_selinux
	update_config '.linux.mountLabel = "system_u:object_r:container_file_t:s0:c1,c2"'
	refused 'linux.mountLabel: "system_u:object_r:container_file_t:s0:c1,c2": selinux label is specified in config, but selinux is disabled or not supported'
}

@test "lsm: malformed SELinux labels and MCS ranges are refused naming the field and the value" {
	local field label want
	while IFS='|' read -r field label want; do
		update_config "del(.process.selinuxLabel) | del(.linux.mountLabel) | .$field = \"$label\""
		refused "$field: \"$label\": malformed SELinux label" "$want"
	done <<-'EOF2'
		process.selinuxLabel|container_t|want user:role:type[:level]
		process.selinuxLabel|system_u::container_t:s0|empty role
		process.selinuxLabel|system_u:system_r:container_t:s0:c1,|level "s0:c1,"
		process.selinuxLabel|system_u:system_r:container_t:x0|level "x0"
		linux.mountLabel|system_u:object_r:container_file_t:s0:c1.cz|level "s0:c1.cz"
		linux.mountLabel|system_u:object_r:container_file_t:s0-|level "s0-"
		linux.mountLabel|system_u:object_r:container_file_t:s0:c0.c4294967295|beyond c65535
	EOF2
}

@test "lsm: exec --apparmor, --process-label and --process refused without the LSM, nothing left" {
	no_apparmor
	no_selinux
	local id
	id="$(new_id)"
	set_args sleep 1000
	run_bg "$id"
	run -255 husk exec --apparmor someprofile "$id" true
	assert_contains "$output" 'process.apparmorProfile: "someprofile": AppArmor is not enabled on this host'
	run -255 husk exec --process-label system_u:system_r:container_t:s0 "$id" true
	assert_contains "$output" 'process.selinuxLabel: "system_u:system_r:container_t:s0": selinux label is specified in config, but selinux is disabled'
	run -255 husk exec --process-label 'system_u:system_r' "$id" true
	assert_contains "$output" 'process.selinuxLabel: "system_u:system_r": malformed SELinux label'
	echo '{"args": ["true"], "cwd": "/", "apparmorProfile": "p"}' >"$TEST_DIR/p.json"
	run -255 husk exec --process "$TEST_DIR/p.json" "$id"
	assert_contains "$output" 'process.apparmorProfile: "p": AppArmor is not enabled'
	echo '{"args": ["true"], "cwd": "/", "selinuxLabel": "u:r:t:s0:c0.c1-s0:cX"}' >"$TEST_DIR/p.json"
	run -255 husk exec --process "$TEST_DIR/p.json" "$id"
	assert_contains "$output" 'process.selinuxLabel: "u:r:t:s0:c0.c1-s0:cX": malformed SELinux label'
	# Nothing of the refused execs runs in the container: only its sleep.
	run -0 husk ps "$id"
	[ "$(grep -c . <<<"$output")" = 2 ] || fail "ps: $output"
	husk kill "$id" KILL
	husk delete -f "$id"
	assert_no_container "$id"
}
