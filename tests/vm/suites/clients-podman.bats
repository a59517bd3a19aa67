#!/usr/bin/env bats
# Guest (a): podman 4.3 with cgroup_manager = "systemd" drives husk
# (--runtime): podman hands the runtime --systemd-cgroup and a
# machine.slice:libpod:ID cgroupsPath; the container must land in the
# transient scope libpod-ID.scope with its limits as unit properties.
# run, exec, stop and rm; nothing is left (no scope, no cgroup).

load ../../clients/helpers
load podman_helpers

setup_file() {
	[ "${HUSK_VM_SETUP:-}" = a ] || skip "needs systemd as PID 1 (VM lane setup a)"
	runtime_ready
	require_cmd podman
	nsdelegate_save # podman's checkpoints may drop it
	podman_suite_setup systemd
}

teardown_file() {
	podman_suite_teardown
}

setup() { :; }

teardown() {
	nsdelegate_restore
	podman_no_containers_left
}

# scope_of ID prints the cgroup (v2 path) of the container's process.
cgroup_of_pid() {
	awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup"
}

@test "podman (systemd): run: output and the container's exit code" {
	run -0 --separate-stderr prun --rm "$IMAGE_REF" sh -c 'echo hello; echo to-stderr >&2'
	[ "$output" = hello ] || fail "stdout: $output"
	[ "$stderr" = to-stderr ] || fail "stderr: $stderr"
	run -5 prun --rm "$IMAGE_REF" sh -c 'exit 5'
}

@test "podman (systemd): the container runs in the unit libpod-ID.scope of machine.slice, with its limits as unit properties" {
	local id pid cg
	run -0 prun -d --name ps1 --memory 64m --pids-limit 99 "$IMAGE_REF" sleep 1000
	id="$output"
	pid="$(podman_ inspect --format '{{.State.Pid}}' ps1)"
	pid_alive "$pid" || fail "container pid $pid not alive"
	cg="$(cgroup_of_pid "$pid")"
	[[ "$cg" == /machine.slice/libpod-"$id".scope* ]] || fail "container cgroup: $cg"
	run -0 systemctl show -p ActiveState -p MemoryMax -p TasksMax "libpod-$id.scope"
	assert_contains "$output" ActiveState=active MemoryMax=67108864 TasksMax=99
	[ "$(cat "/sys/fs/cgroup$cg/memory.max")" = 67108864 ] || fail "memory.max of $cg: $(cat "/sys/fs/cgroup$cg/memory.max")"
	[ "$(cat "/sys/fs/cgroup$cg/pids.max")" = 99 ] || fail "pids.max of $cg: $(cat "/sys/fs/cgroup$cg/pids.max")"
	run -0 podman_ rm -f -t 0 ps1
	assert_pid_gone "$pid"
	run systemctl is-active "libpod-$id.scope"
	[ "$output" != active ] || fail "libpod-$id.scope still active after rm"
}

@test "podman (systemd): exec: output, exit code, and the exec'd process is in the container's scope" {
	require_exec
	local id pid cg procs p found=
	run -0 prun -d --name ps2 "$IMAGE_REF" sleep 1000
	id="$output"
	pid="$(podman_ inspect --format '{{.State.Pid}}' ps2)"
	cg="$(cgroup_of_pid "$pid")"
	run -0 podman_ exec ps2 sh -c 'echo exec-ok'
	[ "$output" = exec-ok ] || fail "output: $output"
	run -6 podman_ exec ps2 sh -c 'exit 6'
	run -0 podman_ exec -d ps2 sleep 777
	for p in $(cat "/sys/fs/cgroup$cg/cgroup.procs"); do
		[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" = "sleep 777 " ] && found=$p
	done
	[ -n "$found" ] || fail "no 'sleep 777' among the processes of $cg: $(cat "/sys/fs/cgroup$cg/cgroup.procs")"
	run -0 podman_ rm -f -t 0 ps2
}

@test "podman (systemd): stop (exit 137) and rm leave no scope and no cgroup" {
	local id pid cg
	run -0 prun -d --name ps3 "$IMAGE_REF" sleep 1000
	id="$output"
	pid="$(podman_ inspect --format '{{.State.Pid}}' ps3)"
	cg="$(cgroup_of_pid "$pid")"
	run -0 podman_ stop -t 1 ps3
	run -0 podman_ inspect --format '{{.State.Status}} {{.State.ExitCode}}' ps3
	[ "$output" = "exited 137" ] || fail "after stop: $output"
	assert_pid_gone "$pid"
	run -0 podman_ rm ps3
	run ! podman_ inspect "$id"
	wait_until 10 test ! -d "/sys/fs/cgroup$cg" || fail "cgroup $cg left after rm"
	run systemctl list-units --all --no-legend "libpod-$id.scope" "libpod-conmon-$id.scope"
	[ -z "$output" ] || fail "units left: $output"
}

# counter NAME [podman run flags]: a container printing "S 1", "S 2", …
# one a line, S a random number it drew at start (a restarted counter
# draws another); returns once it printed two.
counter() {
	local name="$1"
	shift
	run -0 prun -d --name "$name" "$@" "$IMAGE_REF" sh -c 's=$RANDOM$RANDOM; i=0; while :; do i=$((i+1)); echo "$s $i"; sleep 0.2; done'
	wait_until 60 logged_past "$name" 2 || fail "$name printed nothing: $(podman_ logs "$name" 2>&1 | tail -n3)"
}

# past "S N" NAME: NAME's last line counts beyond N.
past() {
	local last
	last="$(podman_ logs "$2" 2>/dev/null | tail -n1)"
	[ -n "$last" ] && [ "${last#* }" -gt "${1#* }" ]
}

# logged_past NAME N: the container printed more than N lines.
logged_past() {
	[ "$(podman_ logs "$1" 2>/dev/null | wc -l)" -gt "$2" ]
}

@test "podman (systemd): container checkpoint and restore: the process resumes where it was, in its scope" {
	local id pid last next
	criu check >/dev/null 2>&1 || skip "criu check fails in this guest"
	counter pck
	id="$(podman_ inspect --format '{{.Id}}' pck)"
	run -0 podman_ container checkpoint pck
	run -0 podman_ inspect --format '{{.State.Status}}' pck
	[ "$output" = exited ] || fail "after checkpoint: $output"
	last="$(podman_ logs pck | wc -l)"
	run -0 podman_ container restore pck
	wait_until 60 logged_past pck "$last" || fail "nothing printed after restore"
	next="$(podman_ logs pck | sed -n "$((last + 1))p" | cut -d' ' -f2)"
	[ "$next" = "$((last + 1))" ] || fail "line $((last + 1)) after restore is '$next': not resumed"
	pid="$(podman_ inspect --format '{{.State.Pid}}' pck)"
	[[ "$(cgroup_of_pid "$pid")" == /machine.slice/libpod-"$id".scope* ]] || fail "restored into $(cgroup_of_pid "$pid")"
	run -0 podman_ rm -f -t 0 pck
	assert_pid_gone "$pid"
	run systemctl is-active "libpod-$id.scope"
	[ "$output" != active ] || fail "libpod-$id.scope still active after rm"
}

@test "podman (systemd): checkpoint --export, restore --import under a new name: the process resumes" {
	local pid before after
	criu check >/dev/null 2>&1 || skip "criu check fails in this guest"
	counter pex
	run -0 podman_ container checkpoint --export "$SUITE_DIR/pex.tar.gz" pex
	before="$(podman_ logs pex | tail -n1)"
	run -0 podman_ container restore --import "$SUITE_DIR/pex.tar.gz" --name pim
	wait_until 60 past "$before" pim || fail "pim printed nothing past '$before': $(podman_ logs pim 2>&1 | tail -n2)"
	after="$(podman_ logs pim | tail -n1)"
	# The same draw, further on: resumed; a restart draws anew.
	[ "${after% *}" = "${before% *}" ] || fail "pim prints '$after', pex printed '$before': started again"
	pid="$(podman_ inspect --format '{{.State.Pid}}' pim)"
	pid_alive "$pid" || fail "pim's pid $pid is not alive"
	run -0 podman_ rm -f -t 0 pex pim
	assert_pid_gone "$pid"
	rm -f "$SUITE_DIR/pex.tar.gz"
}

@test "zz: podman (systemd): nothing is left behind" {
	podman_ rmi -af >/dev/null 2>&1 || true
	podman_unmount_storage
	run systemctl list-units --all --no-legend 'libpod-*'
	[ -z "$output" ] || fail "libpod units left: $output"
	assert_nothing_left "$SUITE_DIR"
}
