#!/usr/bin/env bats
# husk delete, with and without --force.

load helpers

@test "delete: a running container without --force is refused, still running" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	pid="$(container_pid "$id")"
	run ! --separate-stderr husk delete "$id"
	assert_contains "$stderr" "not stopped"
	[ "$(container_status "$id")" = running ] || fail "status: $(container_status "$id")"
	pid_alive "$pid" || fail "pid $pid died"
}

@test "delete --force: a running container is killed and removed" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	pid="$(container_pid "$id")"
	run -0 husk delete --force "$id"
	assert_no_container "$id"
	assert_pid_gone "$pid"
}

@test "delete --force: a created (never started) container is killed and removed" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	create_bg "$id"
	pid="$(container_pid "$id")"
	run -0 husk delete --force "$id"
	assert_no_container "$id"
	assert_pid_gone "$pid"
}

@test "delete: a created container without --force is killed and removed (as runc does)" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	create_bg "$id"
	pid="$(container_pid "$id")"
	run -0 husk delete "$id"
	assert_no_container "$id"
	assert_pid_gone "$pid"
}

@test "delete: a stopped container goes away without --force" {
	local id
	id="$(new_id)"
	set_args true
	run_bg "$id"
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
	assert_no_container "$id"
}

@test "delete --force: a container whose namespaces were joined by another is removed, the other keeps running" {
	local a b pid
	a="$(new_id)"
	b="$(new_id)"
	set_args sleep 100
	run_bg "$a"
	pid="$(container_pid "$a")"
	set_ns ipc "/proc/$pid/ns/ipc"
	run_bg "$b"
	run -0 husk delete --force "$a"
	assert_no_container "$a"
	[ "$(container_status "$b")" = running ] || fail "second: $(container_status "$b")"
	run -0 husk delete --force "$b"
	assert_no_container "$b"
}
