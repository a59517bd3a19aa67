#!/usr/bin/env bats
# Bad configs and bad ids: a clear error, a non-zero exit, nothing left behind.

load helpers

# create_fails ID: `husk create` must fail; its stderr is in $stderr. Then
# assert nothing of ID is left (the teardown checks mounts, processes and
# cgroups for the whole test).
create_fails() {
	local id="$1"
	run ! --separate-stderr husk create --bundle "$BUNDLE" --pid-file "$TEST_DIR/pid" "$id" </dev/null
	echo "stderr: $stderr" >&2
	[ -n "$stderr" ] || fail "no error message on stderr"
	[ ! -e "$TEST_DIR/pid" ] || fail "pid file written for a failed create"
	assert_no_container "$id"
	# A --root that does not exist: nothing to list (and list says so).
	[ -d "$HUSK_ROOT" ] || return 0
	run -0 husk list -q
	[ -z "$output" ] || fail "husk list -q: $output"
}

@test "bad config: unknown namespace type names the field and the value" {
	local id
	id="$(new_id)"
	update_config '.linux.namespaces += [{"type": "netwrk"}]'
	create_fails "$id"
	assert_contains "$stderr" "linux.namespaces" "netwrk"
}

@test "bad config: duplicate namespace names the field and the value" {
	local id
	id="$(new_id)"
	set_ns pid
	update_config '.linux.namespaces += [{"type": "pid"}]'
	create_fails "$id"
	assert_contains "$stderr" "linux.namespaces" "pid"
	grep -qiE 'duplicate|twice|more than once|repeated' <<<"$stderr" || fail "does not say duplicate: $stderr"
}

@test "bad config: empty process.args" {
	local id
	id="$(new_id)"
	update_config '.process.args = []'
	create_fails "$id"
	assert_contains "$stderr" "process.args"
}

@test "bad config: missing process.args" {
	local id
	id="$(new_id)"
	update_config 'del(.process.args)'
	create_fails "$id"
	assert_contains "$stderr" "process.args"
}

@test "bad config: relative root.path that does not exist" {
	local id
	id="$(new_id)"
	update_config '.root.path = "no-such-rootfs"'
	create_fails "$id"
	assert_contains "$stderr" "root.path" "no-such-rootfs"
}

@test "bad config: every refusal says runc's 'invalid configuration', then the field (runc spec bundle)" {
	runc_spec_config
	update_config '.process.terminal = false'
	cp "$BUNDLE/config.json" "$TEST_DIR/good.json"
	local id bad
	# Refused by the conversion, by the host's checks, by the cgroup driver.
	for bad in '.linux.namespaces += [{"type": "netwrk"}]' '.root.path = "no-such-rootfs"' \
		'.linux.cgroupsPath = "/"' '.process.rlimits = [{"type": "RLIMIT_NOSUCH", "soft": 1, "hard": 1}]'; do
		cp "$TEST_DIR/good.json" "$BUNDLE/config.json"
		update_config "$bad"
		id="$(new_id)"
		create_fails "$id"
		[[ "$stderr" == *"invalid configuration: config.json: "* ]] || fail "$bad: $stderr"
	done
	assert_contains "$stderr" "process.rlimits[0]" "RLIMIT_NOSUCH"
	# update and exec --process refuse theirs the same way.
	cp "$TEST_DIR/good.json" "$BUNDLE/config.json"
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	run ! --separate-stderr husk update --cpu-idle 2 "$id"
	assert_contains "$stderr" "invalid configuration" "cpu.idle" "2"
	echo '{"args": [], "cwd": "/"}' >"$TEST_DIR/process.json"
	run ! --separate-stderr husk exec --process "$TEST_DIR/process.json" "$id"
	assert_contains "$stderr" "invalid configuration" "process.args"
	husk delete --force "$id"
}

@test "bad config: malformed JSON reports where" {
	local id
	id="$(new_id)"
	printf '{\n  "ociVersion": "1.0.2",\n  "process": {,}\n}\n' >"$BUNDLE/config.json"
	create_fails "$id"
	assert_contains "$stderr" "config.json"
	grep -qiE '(line|offset|column|col)[ :=]*[0-9]+' <<<"$stderr" || fail "no line/offset in: $stderr"
}

@test "bad config: missing config.json" {
	local id
	id="$(new_id)"
	rm "$BUNDLE/config.json"
	create_fails "$id"
	assert_contains "$stderr" "config.json"
}

@test "bad config: husk run fails the same way and leaves nothing" {
	local id
	id="$(new_id)"
	update_config '.linux.namespaces += [{"type": "netwrk"}]'
	run ! --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "netwrk"
	assert_no_container "$id"
}

@test "bad config: a joined namespace path that does not exist" {
	local id
	id="$(new_id)"
	set_ns network /var/run/netns/husk-no-such-netns
	create_fails "$id"
	assert_contains "$stderr" "/var/run/netns/husk-no-such-netns"
}

@test "bad config: an executable not in the rootfs fails create or start, cleanly" {
	local id
	id="$(new_id)"
	set_args /no/such/binary
	run ! --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "/no/such/binary"
	assert_no_container "$id"
}

@test "ids: duplicate id on create says already exists, the first is untouched" {
	local id
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "already exists"
	[ "$(container_status "$id")" = running ] || fail "first container: $(container_status "$id")"
	run -0 husk list -q
	[ "$output" = "$id" ] || fail "list: $output"
}

@test "ids: state, start, kill and delete of an unknown id say does not exist" {
	local id=husk-no-such-container-$$
	local cmd
	for cmd in state start kill delete; do
		run ! --separate-stderr husk "$cmd" "$id"
		assert_contains "$stderr" "does not exist"
	done
	# runc's delete --force of an unknown id succeeds (idempotent clean-up);
	# if husk refuses instead, it must say why in runc's words.
	run --separate-stderr husk delete --force "$id"
	[ "$status" -eq 0 ] || assert_contains "$stderr" "does not exist"
}

@test "ids: an invalid id is refused" {
	run ! husk create --bundle "$BUNDLE" "../escape" </dev/null
	[ ! -e "$TEST_DIR/escape" ] || fail "id ../escape made $TEST_DIR/escape"
	run ! husk create --bundle "$BUNDLE" "" </dev/null
	[ -d "$HUSK_ROOT" ] || return 0
	run -0 husk list -q
	[ -z "$output" ]
}

@test "list with a --root that does not exist fails, as runc" {
	run ! --separate-stderr husk --root "$TEST_DIR/no-such-root" list
	assert_contains "$stderr" "--root" "$TEST_DIR/no-such-root" "no such file or directory"
	# An existing empty root lists nothing, with success.
	mkdir -p "$TEST_DIR/empty-root"
	run -0 husk --root "$TEST_DIR/empty-root" list -q
	[ -z "$output" ] || fail "list: $output"
}

@test "list with the default root missing prints an empty list, exit 0, as runc" {
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	# A private /run (a mount namespace of its own) where the default root
	# /run/husk cannot exist; other tests' containers are not in it.
	local rt
	for rt in "$HUSK_BIN" /usr/sbin/runc; do
		[ -x "$rt" ] || continue
		run -0 --separate-stderr timeout -k 5 "$HUSK_TIMEOUT" unshare -m sh -c \
			'mount --make-rprivate / && mount -t tmpfs tmpfs /run && "$1" list && "$1" list -q && "$1" list --format json' sh "$rt"
		[ -z "$stderr" ] || fail "$rt list: stderr: $stderr"
		[ "${lines[0]}" = "$(printf '%s' "${lines[0]}" | grep '^ID  *PID  *STATUS  *BUNDLE  *CREATED  *OWNER$')" ] ||
			fail "$rt list: not a table header: ${lines[0]}"
		[ "${#lines[@]}" -eq 2 ] || fail "$rt list: $output"
		[ "${lines[1]}" = "[]" ] || [ "${lines[1]}" = "null" ] || fail "$rt list --format json: ${lines[1]}"
	done
}
