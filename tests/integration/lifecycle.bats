#!/usr/bin/env bats
# create -> start -> kill -> delete, state and list.

load helpers

@test "lifecycle: create -> created -> start -> running -> kill -> stopped -> delete" {
	local id pid
	id="$(new_id)"
	set_args sleep 100

	create_bg "$id"
	run -0 husk state "$id"
	[ "$(jq -r .status <<<"$output")" = created ] || fail "state after create: $output"
	pid="$(jq -r .pid <<<"$output")"
	[ "$(cat "$TEST_DIR/$id.pid")" = "$pid" ] || fail "pid-file $(cat "$TEST_DIR/$id.pid") != state pid $pid"
	pid_alive "$pid" || fail "created container's pid $pid is not alive"

	run -0 husk start "$id" </dev/null 3>&-
	run -0 husk state "$id"
	[ "$(jq -r .status <<<"$output")" = running ] || fail "state after start: $output"
	[ "$(jq -r .pid <<<"$output")" = "$pid" ] || fail "pid changed after start: $output"
	# The process is sleep now (execve'd by init, same pid).
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 100 " ] || fail "cmdline: $(tr '\0' ' ' <"/proc/$pid/cmdline")"

	run -0 husk kill "$id" KILL
	wait_for_status "$id" stopped

	run -0 husk delete "$id"
	assert_no_container "$id"
	assert_pid_gone "$pid"
}

@test "lifecycle: state has the OCI fields" {
	local id
	id="$(new_id)"
	set_args sleep 100
	update_config '.annotations = {"org.husk.test": "yes"}'
	create_bg "$id"
	run -0 husk state "$id"
	jq -e --arg id "$id" --arg b "$BUNDLE" '
		(.ociVersion | type == "string" and length > 0) and
		.id == $id and
		(.pid | type == "number" and . > 0) and
		.status == "created" and
		.bundle == $b and
		(.rootfs | endswith("rootfs")) and
		(.created | type == "string" and test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")) and
		(.owner | type == "string") and
		.annotations["org.husk.test"] == "yes"
	' <<<"$output" || fail "state: $output"
}

@test "lifecycle: a created container has not run its process yet" {
	local id
	id="$(new_id)"
	set_args sh -c 'echo started > /tmp/started; echo started'
	create_bg "$id"
	sleep 0.3
	[ ! -s "$TEST_DIR/$id.out" ] || fail "process ran before start: $(cat "$TEST_DIR/$id.out")"
	run -0 husk start "$id" </dev/null 3>&-
	wait_for_status "$id" stopped
	[ "$(cat "$TEST_DIR/$id.out")" = started ] || fail "output: $(cat "$TEST_DIR/$id.out")"
}

@test "lifecycle: echo container is stopped after start, its output is there, delete works" {
	local id
	id="$(new_id)"
	set_args echo "hello after start"
	create_bg "$id"
	[ "$(container_status "$id")" = created ]
	run -0 husk start "$id" </dev/null 3>&-
	wait_for_status "$id" stopped
	[ "$(cat "$TEST_DIR/$id.out")" = "hello after start" ] || fail "output: $(cat "$TEST_DIR/$id.out")"
	run -0 husk delete "$id"
	assert_no_container "$id"
}

@test "lifecycle: start of a running container fails" {
	local id
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	run ! husk start "$id" </dev/null 3>&-
	[ "$(container_status "$id")" = running ]
}

@test "lifecycle: --pid-file is written with the container's pid" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	create_bg "$id"
	[ -s "$TEST_DIR/$id.pid" ] || fail "pid file missing or empty"
	pid="$(cat "$TEST_DIR/$id.pid")"
	[[ "$pid" =~ ^[0-9]+$ ]] || fail "pid file holds '$pid'"
	pid_alive "$pid" || fail "pid $pid is not alive"
	# Written atomically: no temp files left beside it.
	run -0 ls -A "$TEST_DIR"
	! grep -E "^$id\.pid.+" <<<"$output" || fail "temp pid files left: $output"
}

@test "list: table, json and -q show the container" {
	local id
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"

	run -0 husk list
	[[ "${lines[0]}" =~ ^ID\ +PID\ +STATUS\ +BUNDLE\ +CREATED\ +OWNER ]] || fail "header: ${lines[0]}"
	grep -E "^$id +[0-9]+ +running +$BUNDLE " <<<"$output" || fail "no row for $id: $output"

	run -0 husk list --format table
	grep -qE "^$id +[0-9]+ +running" <<<"$output" || fail "table: $output"

	run -0 husk list --format json
	jq -e --arg id "$id" --arg b "$BUNDLE" \
		'map(select(.id == $id)) | length == 1 and .[0].status == "running" and .[0].bundle == $b and .[0].pid > 0' \
		<<<"$output" || fail "json: $output"

	run -0 husk list -q
	[ "$output" = "$id" ] || fail "-q: $output"
}

@test "list: several containers, several statuses" {
	local a b
	a="$(new_id)"
	b="$(new_id)"
	set_args sleep 100
	create_bg "$a"
	run_bg "$b"
	run -0 husk list --format json
	jq -e --arg a "$a" --arg b "$b" '
		(map(select(.id == $a))[0].status == "created") and
		(map(select(.id == $b))[0].status == "running") and length == 2
	' <<<"$output" || fail "json: $output"
	run -0 husk list -q
	[ "$(sort <<<"$output")" = "$(printf '%s\n' "$a" "$b" | sort)" ] || fail "-q: $output"
}

@test "list: an empty root lists nothing" {
	# An existing root: one that does not exist is an error (errors.bats).
	mkdir -p "$HUSK_ROOT"
	run -0 husk list -q
	[ -z "$output" ]
	run -0 husk list --format json
	jq -e 'length == 0' <<<"$output" || [ "$output" = "null" ] || fail "json: $output"
}

@test "lifecycle: a running container adds no mount to the host's mount table" {
	local id tag before after
	id="$(new_id)"
	tag="$(basename "$TEST_DIR")"
	set_args sleep 100
	before="$(grep -cE -- "$tag|$HUSK_BIN" /proc/self/mountinfo || true)"
	run_bg "$id"
	after="$(grep -E -- "$tag|$HUSK_BIN" /proc/self/mountinfo || true)"
	[ "$before" = 0 ] || fail "mounts before create: $before"
	[ -z "$after" ] || fail "host mounts while running: $after"
}
