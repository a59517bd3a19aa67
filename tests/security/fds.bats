#!/usr/bin/env bats
# CVE-2024-21626 and the fds of a waiting init: no fd of husk's, of the Go
# runtime's or of husk's caller may reach the container. Only stdio, the
# --preserve-fds range and LISTEN_FDS pass. A leaked directory fd is the
# host's filesystem: process.cwd or `exec --cwd` through /proc/self/fd/N
# starts the process outside the rootfs.

load helpers

# escape_script: from its cwd, climb and write a marker on the host's /tmp.
escape_script() {
	echo "cd ../../../../../../../.. 2>/dev/null; echo escaped >tmp/$MARKER 2>/dev/null; pwd; ls /proc/self/fd"
}

setup() {
	setup_husk
	MARKER="husk-escape-$$-$RANDOM"
}

teardown() {
	rm -f "/tmp/$MARKER"
	restore_sysctls
	teardown_husk
}

@test "cve-2024-21626: process.cwd /proc/self/fd/N through husk's own fds stays in the container" {
	local n
	for n in 3 4 5 6 7 8 9; do
		update_config --arg c "/proc/self/fd/$n" '.process.cwd = $c'
		set_args sh -c "$(escape_script)"
		id="$(new_id)"
		run husk run --bundle "$BUNDLE" "$id" </dev/null
		echo "cwd fd $n: $status $output"
		[ ! -e "/tmp/$MARKER" ] || fail "process.cwd /proc/self/fd/$n wrote on the host's /tmp"
	done
}

@test "cve-2024-21626: exec --cwd /proc/self/fd/N through husk's own fds stays in the container" {
	local n
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	for n in 3 4 5 6 7 8 9; do
		run husk exec --cwd "/proc/self/fd/$n" "$id" sh -c "$(escape_script)" </dev/null
		echo "exec --cwd fd $n: $status $output"
		[ ! -e "/tmp/$MARKER" ] || fail "exec --cwd /proc/self/fd/$n wrote on the host's /tmp"
	done
}

@test "cve-2024-21626: a directory fd leaked by husk's caller never reaches the container (run, process.cwd)" {
	update_config '.process.cwd = "/proc/self/fd/7"'
	set_args sh -c "$(escape_script)"
	id="$(new_id)"
	run husk run --bundle "$BUNDLE" "$id" </dev/null 7</
	echo "$output"
	[ ! -e "/tmp/$MARKER" ] || fail "the caller's fd 7 (/) let the container write on the host's /tmp"
	[ "$status" -ne 0 ] || fail "process.cwd /proc/self/fd/7 worked: the caller's fd 7 reached init"
}

@test "cve-2024-21626: a directory fd leaked by husk's caller never reaches an exec'd process (exec --cwd)" {
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	run husk exec --cwd /proc/self/fd/7 "$id" sh -c "$(escape_script)" </dev/null 7</
	echo "$output"
	[ ! -e "/tmp/$MARKER" ] || fail "the caller's fd 7 (/) let an exec'd process write on the host's /tmp"
	[ "$status" -ne 0 ] || fail "exec --cwd /proc/self/fd/7 worked: the caller's fd 7 reached the process"
}

@test "cve-2024-21626: the container's process holds only stdio and what --preserve-fds passes" {
	set_args sh -c 'ls /proc/self/fd | tr "\n" " "'
	id="$(new_id)"
	run -0 husk run --preserve-fds 1 --bundle "$BUNDLE" "$id" </dev/null 3</dev/null 7</ 8<"$BUNDLE/config.json" 9>&-
	echo "$output"
	# 0 1 2, 3 (preserved) and the fd ls opened to read the directory.
	[ "$output" = "0 1 2 3 4 " ] || fail "fds in the container: $output (the caller leaked 7 and 8)"

	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	run -0 husk exec "$id" sh -c 'ls /proc/self/fd | tr "\n" " "' </dev/null 7</ 8<"$BUNDLE/config.json"
	echo "$output"
	[ "$output" = "0 1 2 3 " ] || fail "fds in an exec'd process: $output"
}

# A created (not started) container whose cgroup has a CPU quota: the Go
# runtime of `husk init` opens cpu.cfs_quota_us for GOMAXPROCS.
create_waiting() {
	update_config '.linux.resources.cpu = {quota: 50000, period: 100000}'
	set_args true
	WAIT_ID="$(new_id)"
	create_bg "$WAIT_ID"
	INIT_PID="$(cat "$TEST_DIR/$WAIT_ID.pid")"
}

# cpu_quota_file prints the host path of the waiting init's CPU quota file:
# cgroup v1's cpu.cfs_quota_us, or v2's cpu.max.
cpu_quota_file() {
	local path d
	path="$(awk -F: '$2 == "cpu" || $2 ~ /^cpu,/ || $2 ~ /,cpu$/ {print $3}' /proc/"$INIT_PID"/cgroup)"
	for d in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
		[ -n "$path" ] && [ -e "$d$path/cpu.cfs_quota_us" ] && echo "$d$path/cpu.cfs_quota_us" && return
	done
	path="$(awk -F: '$1 == 0 {print $3}' /proc/"$INIT_PID"/cgroup)"
	for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		[ -e "$d$path/cpu.max" ] && echo "$d$path/cpu.max" && return
	done
}

@test "waiting init: a process exec'd into a created container reaches none of init's fds" {
	create_waiting
	QUOTA="$(cpu_quota_file)"
	[ -n "$QUOTA" ] || skip "no CPU quota file in the container's cgroup"
	quota="$(cat "$QUOTA")"
	run husk exec "$WAIT_ID" sh -c '
		ls -l /proc/1/fd/ 2>&1
		for f in /proc/1/fd/*; do
			case "$f" in */0 | */1 | */2) continue ;; esac # its stdio is the container'"'"'s
			[ -p "$f" ] && continue # a FIFO open would block (or start it)
			echo 12345 >"$f" && echo "wrote $f"
			head -c 1 "$f" >/dev/null && echo "read $f"
		done
		true' </dev/null
	echo "$output"
	quota_now="$(cat "$QUOTA")"
	[ "$quota_now" = "$quota" ] || fail "the container rewrote its host cgroup's $QUOTA to $quota_now"
	! grep -q '^wrote\|^read' <<<"$output" || fail "an exec'd process used init's fds"
}

@test "waiting init: every fd it holds but stdio is husk's own, closed at exec, none on cgroupfs" {
	create_waiting
	local fd n target flags bad=()
	for fd in /proc/"$INIT_PID"/fd/*; do
		n="${fd##*/}"
		target="$(readlink "$fd")"
		flags="$(awk '$1 == "flags:" {print $2}' "/proc/$INIT_PID/fdinfo/$n")"
		echo "$n -> $target (flags $flags)"
		case "$n" in 0 | 1 | 2) continue ;; esac
		# O_CLOEXEC is 02000000: an fd without it would outlive init's execve.
		((8#$flags & 8#2000000)) || bad+=("$n -> $target without O_CLOEXEC")
		case "$target" in
		*/cpu.cfs_* | */cpu.max | /sys/fs/cgroup*) bad+=("$n -> $target on cgroupfs") ;;
		esac
		# One directory: its own fd directory on the container's procfs,
		# opened before the filter to reopen exec.fifo through (not a
		# path the container's mounts could change: issue 33 finding 3).
		[ ! -d "$fd" ] || [ "$target" = /proc/1/fd ] || bad+=("$n -> $target is a directory")
	done
	[ "${#bad[@]}" -eq 0 ] || fail "the waiting init holds: ${bad[*]}"
}
