#!/usr/bin/env bats
# husk kill: signal names and numbers, and a stopped container.

load helpers

# kill_with SIGNAL: a running sleep container is killed by `husk kill ID SIGNAL`.
kill_with() {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	pid="$(container_pid "$id")"
	run -0 husk kill "$id" "$1"
	wait_for_status "$id" stopped
	assert_pid_gone "$pid"
	run -0 husk delete "$id"
	assert_no_container "$id"
}

@test "kill: by name KILL" {
	kill_with KILL
}

@test "kill: by name SIGKILL" {
	kill_with SIGKILL
}

@test "kill: by number 9" {
	kill_with 9
}

@test "kill: default signal is SIGTERM, delivered to a handler in PID 1" {
	local id
	id="$(new_id)"
	# PID 1 only gets signals it handles: trap TERM and record it.
	set_args sh -c 'trap "echo got-term; exit 0" TERM; while :; do sleep 0.1; done'
	run_bg "$id"
	run -0 husk kill "$id"
	wait_for_status "$id" stopped
	[ "$(cat "$TEST_DIR/$id.out")" = got-term ] || fail "output: $(cat "$TEST_DIR/$id.out")"
}

@test "kill: by name USR1 reaches the process" {
	local id
	id="$(new_id)"
	set_args sh -c 'trap "echo got-usr1; exit 0" USR1; while :; do sleep 0.1; done'
	run_bg "$id"
	run -0 husk kill "$id" USR1
	wait_for_status "$id" stopped
	[ "$(cat "$TEST_DIR/$id.out")" = got-usr1 ] || fail "output: $(cat "$TEST_DIR/$id.out")"
}

@test "kill: an unknown signal is refused" {
	local id
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	run ! --separate-stderr husk kill "$id" NOSUCHSIG
	assert_contains "$stderr" NOSUCHSIG
	[ "$(container_status "$id")" = running ]
}

@test "kill: a stopped container says container not running" {
	local id
	id="$(new_id)"
	set_args true
	create_bg "$id"
	run -0 husk start "$id" </dev/null 3>&-
	wait_for_status "$id" stopped
	run ! --separate-stderr husk kill "$id" KILL
	assert_contains "$stderr" "container not running"
	run -0 husk delete "$id"
}

@test "kill: a created container can be killed, then deleted" {
	local id
	id="$(new_id)"
	set_args sleep 100
	create_bg "$id"
	run -0 husk kill "$id" KILL
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
	assert_no_container "$id"
}

# A created container's pid 1 (the launcher, waiting for start) is the
# init of its pid namespace: it gets only the signals it handles. runc's
# waiting init dies on TERM; so must ours.
@test "kill: TERM ends a created container, as runc's waiting init" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	create_bg "$id"
	pid="$(container_pid "$id")"
	run -0 husk kill "$id" TERM
	wait_for_status "$id" stopped
	assert_pid_gone "$pid"
	run -0 husk delete "$id"
	assert_no_container "$id"
}

# The handlers that let TERM end the waiting init are gone after execve:
# the process catches nothing it did not ask for.
@test "kill: the started process inherits no signal handler from the launcher" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	create_bg "$id"
	pid="$(container_pid "$id")"
	grep -q '^SigCgt:[[:space:]]*0*[1-9a-f]' "/proc/$pid/status" || fail "the waiting init catches no signal: $(grep SigCgt "/proc/$pid/status")"
	run -0 husk start "$id"
	wait_for_status "$id" running
	run -0 grep '^SigCgt:' "/proc/$pid/status"
	[[ "$output" =~ ^SigCgt:[[:space:]]*0+$ ]] || fail "the process catches: $output"
	run -0 husk kill "$id" KILL
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
	assert_no_container "$id"
}

@test "kill: signal 0 is a liveness check, 'container not running' once stopped" {
	local id
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	run -0 husk kill "$id" 0
	[ "$(container_status "$id")" = running ] || fail "signal 0 changed the container"
	husk kill "$id" KILL
	wait_for_status "$id" stopped
	run ! --separate-stderr husk kill "$id" 0
	assert_contains "$stderr" "container not running"
	run -0 husk delete "$id"
}

# no_pidns_container ID: a container in the host's pid namespace whose
# init starts a background sleep (its pid in TEST_DIR/child) and waits.
no_pidns_container() {
	del_ns pid
	set_args sh -c 'sleep 1000 & echo $! > /tmp/child; wait'
	update_config '.root.readonly = false'
	run_bg "$1"
	for _ in $(seq 100); do [ -s "$BUNDLE/rootfs/tmp/child" ] && break; sleep 0.05; done
	[ -s "$BUNDLE/rootfs/tmp/child" ] || fail "no child started"
	CHILD="$(cat "$BUNDLE/rootfs/tmp/child")"
}

@test "kill: without a pid namespace KILL signals every process in the container's cgroup" {
	local id init
	id="$(new_id)"
	no_pidns_container "$id"
	init="$(container_pid "$id")"
	run -0 husk kill "$id" KILL
	assert_pid_gone "$init"
	assert_pid_gone "$CHILD"
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
}

@test "kill: without a pid namespace KILL still kills what is left once init is gone" {
	local id init
	id="$(new_id)"
	no_pidns_container "$id"
	init="$(container_pid "$id")"
	# init alone dies; its child lives on in the container's cgroup.
	kill -9 "$init"
	wait_for_status "$id" stopped
	pid_alive "$CHILD" || fail "the child died with init"
	run -0 husk kill "$id" KILL
	assert_pid_gone "$CHILD"
	run ! --separate-stderr husk kill "$id" KILL
	assert_contains "$stderr" "container not running"
	run -0 husk delete "$id"
}
