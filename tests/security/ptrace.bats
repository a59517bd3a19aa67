#!/usr/bin/env bats
# A created container's init waits for `start` with the process's
# credentials and no seccomp filter yet. A process exec'd into the
# container must not be able to ptrace it (and inject code that then runs
# unfiltered), nor to read its memory or fds: init stays non-dumpable
# until its execve.

load helpers

setup() {
	setup_husk
	cp "$(static_tool ptrace-attach)" "$BUNDLE/rootfs/bin/ptrace-attach" || fail "cannot build ptrace-attach"
}

@test "ptrace: a process exec'd into a created container cannot PTRACE_ATTACH to the waiting init" {
	set_args sh -c 'echo started'
	id="$(new_id)"
	create_bg "$id"
	run husk exec "$id" /bin/ptrace-attach 1 </dev/null
	echo "$output"
	[ "$status" -eq 1 ] || fail "ptrace-attach to the waiting init: exit $status: $output"
	assert_contains "$output" "operation not permitted"
	# init is untouched: it still starts and runs the process.
	husk start "$id"
	wait_for_status "$id" stopped
	[ "$(cat "$TEST_DIR/$id.out")" = started ] || fail "init did not run the process: $(cat "$TEST_DIR/$id.out" "$TEST_DIR/$id.err")"
}

@test "ptrace: a process exec'd into a created container cannot read the waiting init's memory or environment" {
	set_args true
	id="$(new_id)"
	create_bg "$id"
	run husk exec "$id" sh -c 'head -c 16 /proc/1/mem; cat /proc/1/environ; cat /proc/1/maps | head -1; readlink /proc/1/exe; echo done' </dev/null
	echo "$output"
	[ "${lines[-1]}" = done ] || fail "the probe did not finish: $output"
	! grep -q 'husk\|_HUSK\|r-xp' <<<"$output" || fail "the waiting init's memory map, environment or exe is readable"
}

@test "ptrace: the container's process itself stays traceable by its own processes after start" {
	# Non-dumpability ends at execve: the container's process is an ordinary one.
	set_args sh -c 'sleep 1000 & sleep 0.2; /bin/ptrace-attach $!; kill $!'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	assert_contains "$output" "attached to"
}
