#!/usr/bin/env bats
# Setup c of the VM lane: Debian 12's own kernel, where AppArmor is the
# major LSM, with the apparmor package. runc 1.1.5 and husk run the same
# checks: the profile of the container's pid 1 and of every exec (the
# config's, `exec --apparmor`, `exec --process`), that the profile's deny
# rule holds, and an unknown profile. (runc's own bats suite has no
# AppArmor case to mirror.)

load lsm_helpers

PROFILE=husk-vm-deny

setup_file() {
	[ "${HUSK_VM_SETUP:-}" = c ] || skip "AppArmor guest only (setup c; this is '${HUSK_VM_SETUP:-not a guest}')"
	apparmor_parser -r "$BATS_TEST_DIRNAME/../apparmor/$PROFILE"
}

teardown() {
	lsm_teardown
}

@test "apparmor: the guest has AppArmor as its LSM and the test profile is loaded" {
	[ "$(cat /sys/module/apparmor/parameters/enabled)" = Y ] || fail "AppArmor is not enabled"
	assert_contains "$(cat /sys/kernel/security/lsm)" apparmor
	grep -q "^$PROFILE (enforce)" /sys/kernel/security/apparmor/profiles ||
		fail "$PROFILE not loaded: $(cat /sys/kernel/security/apparmor/profiles)"
}

# check_confined RUNTIME: the config's profile on pid 1 and on an exec,
# its deny rule enforced; exec --apparmor and --process choose another.
check_confined() {
	local r="$1" id
	id="$(new_id)"
	update_config --arg p "$PROFILE" '.process.apparmorProfile = $p | .root.readonly = false'
	start_labelled "$r" "$id" "$PROFILE (enforce)"
	run rt "$r" exec "$id" sh -c 'echo x >/husk-denied'
	[ "$status" -ne 0 ] || fail "$r: the profile's deny rule did not hold"
	assert_contains "$output" "Permission denied"
	run rt "$r" exec "$id" sh -c 'echo x >/husk-allowed'
	[ "$status" -eq 0 ] || fail "$r: a write the profile allows failed: $output"
	# exec --apparmor: another profile for this process only.
	exec_attr_is "$r" unconfined --apparmor unconfined "$id" sh -c 'echo x >/husk-denied && cat /proc/self/attr/current'
	# exec --process: the process.json's profile.
	jq -n --arg p "$PROFILE" '{cwd: "/", args: ["cat", "/proc/self/attr/current"], apparmorProfile: $p,
		user: {uid: 0, gid: 0}, env: ["PATH=/bin:/sbin"]}' >"$TEST_DIR/process.json"
	exec_attr_is "$r" "$PROFILE (enforce)" --process "$TEST_DIR/process.json" "$id"
	# pid 1 kept its profile.
	pid_attr_is "$r" "$CTR_PID" "$PROFILE (enforce)"
	rt "$r" delete --force "$id"
}

@test "apparmor (runc): the config's profile confines pid 1 and every exec; --apparmor and --process choose another" {
	check_confined runc
}

@test "apparmor (husk): the config's profile confines pid 1 and every exec; --apparmor and --process choose another" {
	check_confined husk
}

@test "apparmor (runc, husk): an unknown profile fails the start, nothing left; husk names the field and the profile" {
	local r id
	update_config '.process.apparmorProfile = "husk-vm-no-such-profile"'
	set_args true
	for r in runc husk; do
		id="$(new_id)"
		run rt "$r" run --bundle "$BUNDLE" "$id"
		[ "$status" -ne 0 ] || fail "$r ran a container with an unknown profile"
		echo "$r: $output"
		run rt "$r" state "$id"
		[ "$status" -ne 0 ] || fail "$r kept the container: $output"
	done
	run rt husk run --bundle "$BUNDLE" "$(new_id)"
	assert_contains "$output" process.apparmorProfile
	assert_contains "$output" husk-vm-no-such-profile
	[ -z "$(ls -A "$HUSK_ROOT" 2>/dev/null)" ] || fail "husk left state: $(ls -A "$HUSK_ROOT")"
}
