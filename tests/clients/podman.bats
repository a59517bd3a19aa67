#!/usr/bin/env bats
# podman 4.3 (with conmon) drives the runtime under test (--runtime): run,
# exit codes, exec, a detached container, stop, rm, under podman's default
# seccomp profile. Private storage, runroot, tmpdir and containers.conf;
# cgroupfs, file events, k8s-file logs, no network (--network none).

load helpers

setup_file() {
	runtime_ready
	require_cmd podman
	export SUITE_DIR CONTAINERS_CONF CONTAINERS_STORAGE_CONF CGROUP_PARENT
	SUITE_DIR="$(new_suite_dir)"
	CGROUP_PARENT="hpod$$"
	CONTAINERS_CONF="$SUITE_DIR/containers.conf"
	CONTAINERS_STORAGE_CONF="$SUITE_DIR/storage.conf"
	mkdir -p "$SUITE_DIR"/{root,runroot,tmp,cni}
	ls -A /sys/fs/cgroup >"$SUITE_DIR/cgroup-dirs.before"
	# podman's default nofile/nproc ulimits (1048576, 4194304) exceed this
	# machine's hard limits, and root lacks CAP_SYS_RESOURCE to raise them.
	cat >"$CONTAINERS_CONF" <<-EOF
		[containers]
		default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
		log_driver = "k8s-file"
		seccomp_profile = "/usr/share/containers/seccomp.json"
		cgroups = "enabled"
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		events_logfile_path = "$SUITE_DIR/events.log"
		tmp_dir = "$SUITE_DIR/tmp"
		static_dir = "$SUITE_DIR/root/libpod"
		volume_path = "$SUITE_DIR/root/volumes"
		[network]
		network_config_dir = "$SUITE_DIR/cni"
	EOF
	cat >"$CONTAINERS_STORAGE_CONF" <<-EOF
		[storage]
		driver = "overlay"
		graphroot = "$SUITE_DIR/root"
		runroot = "$SUITE_DIR/runroot"
	EOF
	local rootfs
	rootfs="$(build_rootfs)" || fail "cannot build the busybox rootfs"
	tar -C "$rootfs" --exclude=./.complete -cf "$SUITE_DIR/rootfs.tar" . ||
		fail "cannot tar $rootfs"
	podman_ import --change 'CMD=["sh"]' "$SUITE_DIR/rootfs.tar" "$IMAGE_REF" >/dev/null ||
		fail "podman import failed"
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	podman_ rm -af -t 0 >/dev/null 2>&1 || true
	podman_cleanup
	clean_leaks "$SUITE_DIR" "$CGROUP_PARENT"
	rm -rf "$SUITE_DIR"
}

setup() { :; }

# Every test removes its containers; a leftover is a failure.
teardown() {
	local left
	left="$(podman_ ps -aq 2>/dev/null)"
	[ -z "$left" ] || {
		podman_ rm -af -t 0 >/dev/null 2>&1
		fail "containers left: $left"
	}
}

podman_() {
	timeout -k 5 "$CLIENT_TIMEOUT" podman --runtime "$CLIENT_RUNTIME" \
		--root "$SUITE_DIR/root" --runroot "$SUITE_DIR/runroot" --tmpdir "$SUITE_DIR/tmp" \
		--cgroup-manager cgroupfs --events-backend file "$@"
}

# prun [podman run flags] ARGS...: podman run with no network, in the
# suite's cgroup parent.
prun() {
	podman_ run --network none --cgroup-parent "/$CGROUP_PARENT" "$@"
}

# podman_cleanup: the storage driver keeps its overlay home mounted
# (private) until told to shut down; unmount what podman left in the suite
# dir, so that leaks_of sees only real leaks.
podman_cleanup() {
	podman_ rmi -af >/dev/null 2>&1 || true
	grep -F " $SUITE_DIR/root/overlay " /proc/self/mountinfo | awk '{print $5}' |
		while read -r m; do umount "$m" 2>/dev/null || true; done
	# podman puts conmon in PARENT/conmon and never removes that cgroup.
	remove_cgroup_parent "$CGROUP_PARENT/conmon"
	remove_cgroup_parent "$CGROUP_PARENT"
	remove_unmounted_controller_dirs
}

# On a hybrid host podman (cgroupfs driver, v1) makes PARENT/conmon in
# each v1 controller it knows, mounted or not: for one that is not, that is
# plain directories on /sys/fs/cgroup's tmpfs, with a cgroup.procs file
# holding conmon's pid, that rmdir cannot take. Only there (on tmpfs, never
# in a cgroup hierarchy) remove the suite's PARENT tree, and the controller
# directory itself when podman made it (it was not there before the suite).
remove_unmounted_controller_dirs() {
	local d name
	for d in /sys/fs/cgroup/*/; do
		d="${d%/}" name="${d##*/}"
		[ "$(stat -f -c %T "$d")" = tmpfs ] || continue
		rm -rf "${d:?}/$CGROUP_PARENT"
		grep -qxF "$name" "$SUITE_DIR/cgroup-dirs.before" 2>/dev/null || rmdir "$d" 2>/dev/null || true
	done
	return 0
}

@test "podman run: output, stderr and a zero exit code" {
	run -0 --separate-stderr prun --rm "$IMAGE_REF" sh -c 'echo hello; echo to-stderr >&2'
	[ "$output" = hello ] || fail "stdout: $output"
	[ "$stderr" = to-stderr ] || fail "stderr: $stderr"
}

@test "podman run: the container's exit code, and stdin" {
	run -5 prun --rm "$IMAGE_REF" sh -c 'exit 5'
	run -0 prun --rm -i "$IMAGE_REF" sh -c 'read l; echo "got $l"' <<<"via-stdin"
	[ "$output" = "got via-stdin" ] || fail "stdin: $output"
}

@test "podman run: podman's default seccomp profile is in force" {
	run -0 prun --rm "$IMAGE_REF" grep '^Seccomp:' /proc/self/status
	[[ "$output" == *2 ]] || fail "seccomp mode (2 = filter): $output"
}

@test "podman run: a missing command exits 127, a non-executable one 126, with the runtime's reason" {
	run -127 prun --rm "$IMAGE_REF" /no/such/cmd
	assert_contains "$output" "/no/such/cmd"
	run -126 prun --rm "$IMAGE_REF" /etc/passwd
	assert_contains "$output" "/etc/passwd" "permission denied"
}

@test "podman run -d: a detached container runs, stops (exit 137), and is removed" {
	local id pid
	run -0 prun -d --name pd1 "$IMAGE_REF" sleep 1000
	id="$output"
	run -0 podman_ inspect --format '{{.State.Running}} {{.State.Pid}}' pd1
	[[ "$output" == "true "* ]] || fail "inspect: $output"
	pid="${output#true }"
	pid_alive "$pid" || fail "container pid $pid not alive after podman exited"
	run -0 podman_ stop -t 1 pd1
	run -0 podman_ inspect --format '{{.State.Status}} {{.State.ExitCode}}' pd1
	[ "$output" = "exited 137" ] || fail "after stop: $output"
	assert_pid_gone "$pid"
	run -0 podman_ rm pd1
	run ! podman_ inspect "$id"
}

@test "podman rm -f removes a running container" {
	local pid
	run -0 prun -d --name pd2 "$IMAGE_REF" sleep 1000
	pid="$(podman_ inspect --format '{{.State.Pid}}' pd2)"
	run -0 podman_ rm -f -t 0 pd2
	assert_pid_gone "$pid"
}

@test "podman pause, unpause and kill of a detached container" {
	local pid
	run -0 prun -d --name pd5 "$IMAGE_REF" sleep 1000
	pid="$(podman_ inspect --format '{{.State.Pid}}' pd5)"
	run -0 podman_ pause pd5
	run -0 podman_ inspect --format '{{.State.Status}}' pd5
	[ "$output" = paused ] || fail "after pause: $output"
	run -0 podman_ unpause pd5
	run -0 podman_ inspect --format '{{.State.Status}}' pd5
	[ "$output" = running ] || fail "after unpause: $output"
	run -0 podman_ kill --signal KILL pd5
	wait_until 10 bash -c "! kill -0 $pid 2>/dev/null || [ \"\$(awk '{print \$3}' /proc/$pid/stat 2>/dev/null)\" = Z ]" ||
		fail "pid $pid alive after podman kill"
	run -0 podman_ wait pd5
	[ "$output" = 137 ] || fail "podman wait: $output"
	run -0 podman_ rm pd5
}

@test "podman run -t: the process has a terminal (console socket through conmon)" {
	run -0 prun --rm -t "$IMAGE_REF" sh -c 'test -t 0 && test -t 1 && echo TTY-YES'
	assert_contains "$output" TTY-YES
}

@test "podman logs of a detached container (k8s-file)" {
	run -0 prun -d --name pd3 "$IMAGE_REF" sh -c 'echo logged-line; echo err-line >&2'
	wait_until 10 bash -c "[ \"\$(podman --root $SUITE_DIR/root --runroot $SUITE_DIR/runroot --tmpdir $SUITE_DIR/tmp --cgroup-manager cgroupfs inspect --format '{{.State.Status}}' pd3)\" = exited ]" ||
		fail "pd3 did not exit"
	run -0 podman_ logs pd3
	assert_contains "$output" logged-line err-line
	run -0 podman_ inspect --format '{{.State.ExitCode}}' pd3
	[ "$output" = 0 ] || fail "exit code: $output"
	run -0 podman_ rm pd3
}

@test "podman exec: output and exit code in a running container" {
	require_exec
	run -0 prun -d --name pd4 "$IMAGE_REF" sleep 1000
	run -0 podman_ exec pd4 sh -c 'echo exec-ok'
	[ "$output" = exec-ok ] || fail "output: $output"
	run -6 podman_ exec pd4 sh -c 'exit 6'
	run -0 podman_ exec pd4 grep '^Seccomp:' /proc/self/status
	[[ "$output" == *2 ]] || fail "exec seccomp mode: $output"
	run -0 podman_ rm -f -t 0 pd4
}

@test "zz: nothing is left behind" {
	podman_cleanup
	assert_nothing_left "$SUITE_DIR" "$CGROUP_PARENT"
}
