#!/usr/bin/env bats
# checkpoint and restore: the refusals, which come before CRIU runs and
# so hold on any host, and (where CRIU works) a round trip. Each bad input
# fails with an error naming the flag or the file, and leaves nothing: the
# container is as it was, a restore leaves no state, cgroup or mount.
# The round trips live in tests/vm/suites/checkpoint.bats: on this CI
# host's kernel Debian's criu 3.17 cannot run (criu check says why).

load helpers

# criu_works skips the test, naming CRIU's own reason, where it cannot run.
criu_works() {
	command -v criu >/dev/null || skip "no criu binary"
	local out
	out="$(criu check 2>&1)" || skip "criu check fails here: $(grep -m1 -i error <<<"$out" || tail -n1 <<<"$out")"
}

# counter: the container counts in /count; its stdio is /dev/null.
counter() {
	update_config '.root.readonly = false'
	set_args sh -c 'i=0; while :; do i=$((i+1)); echo $i >>/count; sleep 0.2; done'
}

@test "checkpoint: a container that is not running is refused with its status, and stays" {
	local id
	id="$(new_id)"
	counter
	create_bg "$id"
	run ! --separate-stderr husk checkpoint --image-path "$TEST_DIR/img" "$id"
	assert_contains "$stderr" "Container cannot be checkpointed in created state"
	[ "$(container_status "$id")" = created ]
	[ ! -e "$TEST_DIR/img/inventory.img" ]
	husk delete --force "$id"
	run ! --separate-stderr husk checkpoint --image-path "$TEST_DIR/img" "$id"
	assert_contains "$stderr" "container $id does not exist"
}

@test "checkpoint: no criu binary, bad flags and an absolute --parent-path are refused by name; the container runs on" {
	local id pid
	id="$(new_id)"
	counter
	run_bg "$id"
	pid="$(container_pid "$id")"
	run ! --separate-stderr husk --criu /nonexistent/criu checkpoint --image-path "$TEST_DIR/img" "$id"
	assert_contains "$stderr" 'criu binary "/nonexistent/criu"' "--criu"
	run ! --separate-stderr husk checkpoint --image-path "$TEST_DIR/img" --parent-path /abs/pre "$id"
	assert_contains "$stderr" "--parent-path /abs/pre: must be relative"
	run ! --separate-stderr husk checkpoint --image-path "$TEST_DIR/img" --parent-path missing "$id"
	assert_contains "$stderr" "--parent-path missing" "no such file"
	[ ! -e "$TEST_DIR/img" ] || fail "a refused checkpoint made $TEST_DIR/img"
	run ! --separate-stderr husk checkpoint --manage-cgroups-mode hard "$id"
	assert_contains "$stderr" '--manage-cgroups-mode "hard"'
	run ! --separate-stderr husk checkpoint --page-server nowhere "$id"
	assert_contains "$stderr" '--page-server "nowhere"'
	run ! --separate-stderr husk checkpoint --page-server 127.0.0.1:99999 "$id"
	assert_contains "$stderr" "port \"99999\""
	run ! --separate-stderr husk checkpoint --empty-ns ipc "$id"
	assert_contains "$stderr" '--empty-ns "ipc"'
	run ! --separate-stderr husk checkpoint --status-fd 1 "$id"
	assert_contains "$stderr" "--status-fd 1: only with --lazy-pages"
	run ! --separate-stderr setpriv --reuid 65534 --regid 65534 --clear-groups "$HUSK_BIN" --root "$TEST_DIR/user-root" checkpoint --image-path "$TEST_DIR/img" "$id"
	assert_contains "$stderr" "checkpoint and restore need root" "rootless"
	[ "$(container_status "$id")" = running ]
	[ "$(container_pid "$id")" = "$pid" ]
	[ ! -e "$TEST_DIR/img/inventory.img" ]
}

@test "restore: a missing or empty image directory, a bad descriptors.json, no criu binary, and an id that exists are refused by name; nothing is left" {
	local id other
	id="$(new_id)"
	counter
	run ! --separate-stderr husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/none" "$id"
	assert_contains "$stderr" "--image-path $TEST_DIR/none: no checkpoint there" "inventory.img"
	assert_no_container "$id"
	mkdir "$TEST_DIR/empty"
	run ! --separate-stderr husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/empty" "$id"
	assert_contains "$stderr" "--image-path $TEST_DIR/empty: no checkpoint there"
	assert_no_container "$id"
	run ! --separate-stderr husk --criu /nonexistent/criu restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/empty" "$id"
	assert_contains "$stderr" 'criu binary "/nonexistent/criu"'
	assert_no_container "$id"
	# descriptors.json names fds 0-2 only: a fourth would give CRIU's own
	# RPC socket to the process.
	: >"$TEST_DIR/empty/inventory.img"
	echo '["pipe:[1]","/dev/null","/dev/null","pipe:[2]"]' >"$TEST_DIR/empty/descriptors.json"
	run ! --separate-stderr husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/empty" "$id"
	assert_contains "$stderr" "$TEST_DIR/empty/descriptors.json: 4 descriptors, at most 3"
	assert_no_container "$id"
	# An image directory that looks like one, onto an id that exists.
	echo '["/dev/null","/dev/null","/dev/null"]' >"$TEST_DIR/empty/descriptors.json"
	other="$(new_id)"
	run_bg "$other"
	run ! --separate-stderr husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/empty" "$other"
	assert_contains "$stderr" "container $other already exists"
	[ "$(container_status "$other")" = running ]
	update_config '.process.terminal = true'
	run ! --separate-stderr husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/empty" "$id"
	assert_contains "$stderr" "process.terminal: restore needs --console-socket"
	assert_no_container "$id"
}

@test "restore: CRIU failing on images it cannot read leaves no state, cgroup, mount or process" {
	command -v criu >/dev/null || skip "no criu binary"
	local id
	id="$(new_id)"
	counter
	mkdir "$TEST_DIR/bad"
	echo '["/dev/null","/dev/null","/dev/null"]' >"$TEST_DIR/bad/descriptors.json"
	echo garbage >"$TEST_DIR/bad/inventory.img"
	run ! --separate-stderr husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/bad" "$id"
	assert_contains "$stderr" "restore container $id" "criu"
	assert_no_container "$id"
	! grep -q criu-root /proc/self/mountinfo || fail "criu-root still mounted: $(grep criu-root /proc/self/mountinfo)"
}

@test "checkpoint and restore: a counter resumes where it was (where CRIU works)" {
	criu_works
	local id last
	id="$(new_id)"
	counter
	run_bg "$id"
	until [ -s "$BUNDLE/rootfs/count" ]; do sleep 0.1; done
	husk checkpoint --image-path "$TEST_DIR/img" "$id"
	assert_no_container "$id"
	last="$(tail -n1 "$BUNDLE/rootfs/count")"
	husk restore -d --bundle "$BUNDLE" --image-path "$TEST_DIR/img" "$id" </dev/null >/dev/null 2>&1
	[ "$(container_status "$id")" = running ]
	until [ "$(wc -l <"$BUNDLE/rootfs/count")" -gt "$last" ]; do sleep 0.1; done
	[ "$(sed -n "$((last + 1))p" "$BUNDLE/rootfs/count")" = "$((last + 1))" ]
}
