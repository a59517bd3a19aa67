#!/usr/bin/env bats
# The phase trace (HUSK_TRACE, --debug): every process's marks, in order,
# with durations that are never negative. What the phases cost is the
# benchmark's business (bench/), never asserted here.

load helpers

# phases FILE PROC: the phases of process PROC in trace FILE, one per line.
phases() {
	jq -r --arg p "$2" 'select(.proc == $p) | .phase' "$1"
}

# check_trace FILE: every record has a time, a pid, a non-negative ms, and
# each process's records go forward in time.
check_trace() {
	jq -e -s '
		all(.[]; (.t | type) == "number" and .t > 0 and (.pid | type) == "number" and .ms >= 0)
		and (group_by(.pid) | all(.[]; [.[].t] == ([.[].t] | sort)))
	' "$1" >/dev/null || fail "bad trace: $(cat "$1")"
}

@test "trace: run records every phase of parent and init, in order" {
	local id trace
	id="$(new_id)"
	trace="$TEST_DIR/trace.json"
	set_args true
	HUSK_TRACE="$trace" husk run --bundle "$BUNDLE" "$id" </dev/null
	check_trace "$trace"
	run -0 phases "$trace" run
	[ "$(echo $output)" = "main config prepare cgroups spawn nsexec created fifo-wait container teardown exit" ] ||
		fail "run's phases: $(echo $output)"
	run -0 phases "$trace" init
	# Its pid 1 (the launcher, which never starts Go): CONFIG read, the
	# rootfs built, the hooks run, pivot_root, ready, execve.
	[ "$(echo $output)" = "config rootfs hooks setup ready execve" ] || fail "init's phases: $(echo $output)"
	# init's records reach the file through the run process, and init's
	# marks come after the parent's spawn (nsexec waits for the message
	# sent after it) and before its created. (init enters its cgroups
	# itself: no "join" phase, which only a move by pid has.)
	jq -e -s '
		(map(select(.proc == "run" and .phase == "spawn"))[0].t) as $n
		| (map(select(.proc == "run" and .phase == "created"))[0].t) as $c
		| all(.[] | select(.proc == "init" and .phase != "execve"); .t >= $n and .t <= $c)
	' "$trace" >/dev/null || fail "init's marks out of place: $(cat "$trace")"
}

@test "trace: create, start, exec and delete each record their own phases" {
	local id trace
	id="$(new_id)"
	trace="$TEST_DIR/trace.json"
	set_args sleep 100
	export HUSK_TRACE="$trace"
	husk create --bundle "$BUNDLE" "$id" </dev/null
	husk start "$id"
	husk exec "$id" true
	husk delete --force "$id"
	unset HUSK_TRACE
	check_trace "$trace"
	run -0 phases "$trace" create
	[ "$(echo $output)" = "main config prepare cgroups spawn nsexec created exit" ] || fail "create: $(echo $output)"
	run -0 phases "$trace" start
	[ "$(echo $output)" = "main fifo-wait exit" ] || fail "start: $(echo $output)"
	run -0 phases "$trace" exec
	[ "$(echo $output)" = "main spawn nsexec container exit" ] || fail "exec: $(echo $output)"
	run -0 phases "$trace" delete
	[ "$(echo $output)" = "main exit" ] || fail "delete: $(echo $output)"
	# A create's pid 1 (the launcher) builds the container, is ready and
	# execs on start. The exec's launcher (no config) is ready, forks, and
	# sees the process exec'd. No init process starts Go.
	run -0 jq -r -s 'map(select(.proc == "init")) | group_by(.pid) | map(map(.phase) | join(" ")) | .[]' "$trace"
	grep -qx "config rootfs hooks setup ready execve" <<<"$output" || fail "the container's pid 1: $output"
	! grep -qw main <<<"$output" || fail "an init process booted Go: $output"
	grep -qx "ready execve" <<<"$output" || fail "the exec's launcher: $output"
}

@test "trace: off without HUSK_TRACE or --debug; --debug logs each phase with its ms" {
	local id log
	id="$(new_id)"
	log="$TEST_DIR/log.json"
	set_args true
	husk --debug --log "$log" --log-format json run --bundle "$BUNDLE" "$id" </dev/null
	run -0 jq -r 'select(.phase != null) | "\(.phase) \(.ms >= 0)"' "$log"
	assert_contains "$output" "config true"
	assert_contains "$output" "cgroups true"
	assert_contains "$output" "teardown true"
	# init's phases too, forwarded by the parent.
	run -0 jq -r 'select(.phase == "rootfs") | .msg' "$log"
	assert_contains "$output" "init rootfs"
	# A trace file appears only when asked for.
	[ ! -e "$BUNDLE/trace.json" ] && [ -z "$(ls "$TEST_DIR" | grep -i trace)" ] || fail "a trace file appeared"
}
