#!/usr/bin/env bash
# Shared set-up of husk's security suite: the integration helpers (a busybox
# bundle per test, a teardown that fails the test on any leak), plus what
# the attacks need. Every test here does a real attack from inside a
# container and then checks the host (a file's hash, a sysctl's value, the
# host's mount table).

load ../integration/helpers

# sha FILE prints the file's sha256.
sha() {
	sha256sum "$1" | cut -d' ' -f1
}

# host_mounts prints the host's mount table without the mount ids, to
# compare before and after an attack.
host_mounts() {
	awk '{ $1 = ""; $2 = ""; print }' /proc/self/mountinfo | sort
}

# no_dev_mounts: the config mounts nothing on /dev or under it, so the
# image's own /dev is all the container has (the CVE-2025-31133 set-up).
no_dev_mounts() {
	update_config '.mounts = [.mounts[] | select(.destination | startswith("/dev") | not)]'
}

# static_tool NAME prints the path of tests/cmd/NAME built static (for a
# busybox rootfs), once per run.
static_tool() {
	local out="$HUSK_TEST_CACHE/bin/static-$1"
	mkdir -p "$HUSK_TEST_CACHE/bin"
	(
		flock 9
		cd "$REPO_ROOT" && CGO_ENABLED=0 go build -o "$out" "./tests/cmd/$1"
	) 9>"$HUSK_TEST_CACHE/.build.lock" >&2 || return 1
	echo "$out"
}

# sysctl_path NAME prints /proc/sys/... for NAME (a.b.c).
sysctl_path() {
	echo "/proc/sys/${1//.//}"
}

# save_sysctl NAME: remember a host sysctl so the teardown puts it back
# (an attack that works on a broken husk must not leave the host changed).
save_sysctl() {
	echo "$1=$(cat "$(sysctl_path "$1")")" >>"$TEST_DIR/sysctls"
}

restore_sysctls() {
	local kv
	[ -e "$TEST_DIR/sysctls" ] || return 0
	while read -r kv; do
		echo "${kv#*=}" >"$(sysctl_path "${kv%%=*}")" || true
	done <"$TEST_DIR/sysctls"
}

# no_process_left TAG WHAT: no process has the test's rootfs (its dir's
# name TAG) as its root, and no husk init mentions it; WHAT starts each
# failure.
no_process_left() {
	local pid
	for pid in $(leaked_pids "$1"); do
		fail "$2: process $pid left in the container: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	done
	for pid in $(pgrep -f -- "$(basename "$HUSK_BIN") init"); do
		if pid_mentions "$pid" "$1"; then
			fail "$2: 'husk init' $pid left"
		fi
	done
}

setup() {
	setup_husk
}

teardown() {
	restore_sysctls
	teardown_husk
}
