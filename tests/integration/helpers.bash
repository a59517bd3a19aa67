#!/usr/bin/env bash
# Shared set-up for husk's bats suites.
#
# Every test gets:
#   TEST_DIR   its own world-traversable temp dir (user namespaces need to
#              walk the path to the rootfs as a non-root host uid)
#   HUSK_ROOT  the --root of every husk call in the test (TEST_DIR/root)
#   BUNDLE     TEST_DIR/bundle: a busybox rootfs and a config.json made by
#              `husk spec`, edited with update_config/set_ns/del_ns
# and a teardown that force-deletes every container, then FAILS the test if
# anything leaked: a state dir, a mount, a `husk init` or container process,
# a netns the test made, or a cgroup named after one of the test's ids.
#
# Environment knobs:
#   HUSK_BIN         husk binary to test (default: the repository's ./husk)
#   HUSK_TEST_CACHE  where the busybox rootfs is built once and kept
#   HUSK_TIMEOUT     seconds any single husk call may take (default 60)
#   HUSK_TOOLS_DIR   prebuilt tests/cmd tools (the VM lane sets it)

bats_require_minimum_version 1.5.0

# From this file's place, so suites in other directories (tests/vm/suites)
# can load it.
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HUSK_BIN="${HUSK_BIN:-$REPO_ROOT/husk}"
HUSK_TEST_CACHE="${HUSK_TEST_CACHE:-${TMPDIR:-/tmp}/husk-test-cache}"
HUSK_TIMEOUT="${HUSK_TIMEOUT:-60}"
BUSYBOX="${BUSYBOX:-/bin/busybox}"

# husk runs the binary under test with this test's --root; global flags may
# follow (husk --log F --log-format json create ...).
husk() {
	timeout -k 5 "$HUSK_TIMEOUT" "$HUSK_BIN" --root "$HUSK_ROOT" "$@"
}

# fail prints its arguments to stderr and fails the test.
fail() {
	echo "FAIL: $*" >&2
	return 1
}

# ---------------------------------------------------------------- rootfs ---

# busybox_is_static succeeds when $BUSYBOX runs without a dynamic loader
# (Debian's plain `busybox` package is dynamic and useless in a rootfs).
busybox_is_static() {
	[ -x "$BUSYBOX" ] || return 1
	command -v ldd >/dev/null || return 0
	! ldd "$BUSYBOX" >/dev/null 2>&1
}

# build_rootfs makes (once, under a lock) a busybox rootfs in the cache and
# prints its path. The cache is keyed by busybox's checksum.
build_rootfs() {
	busybox_is_static || {
		echo "no static busybox at $BUSYBOX (apt-get install busybox-static)" >&2
		return 1
	}
	local sum dir tmp
	sum="$(sha256sum "$BUSYBOX" | cut -c1-16)"
	dir="$HUSK_TEST_CACHE/rootfs-$sum"
	mkdir -p "$HUSK_TEST_CACHE"
	(
		flock 9
		[ -e "$dir/.complete" ] && exit 0
		rm -rf "$dir"
		tmp="$(mktemp -d "$HUSK_TEST_CACHE/build.XXXXXX")"
		mkdir -p "$tmp"/{bin,sbin,etc,proc,sys,dev,tmp,root,home/user,run,var}
		chmod 1777 "$tmp/tmp"
		chmod 0755 "$tmp"
		cp "$BUSYBOX" "$tmp/bin/busybox"
		local applet
		for applet in $("$tmp/bin/busybox" --list); do
			[ -e "$tmp/bin/$applet" ] || ln -s busybox "$tmp/bin/$applet"
		done
		cat >"$tmp/etc/passwd" <<-'EOF'
			root:x:0:0:root:/root:/bin/sh
			user:x:1000:1000:user:/home/user:/bin/sh
			nobody:x:65534:65534:nobody:/nonexistent:/bin/false
		EOF
		cat >"$tmp/etc/group" <<-'EOF'
			root:x:0:
			user:x:1000:
			nogroup:x:65534:
		EOF
		chown 1000:1000 "$tmp/home/user"
		touch "$tmp/.complete"
		mv "$tmp" "$dir"
	) 9>"$HUSK_TEST_CACHE/.lock" || return 1
	echo "$dir"
}

# ------------------------------------------------------------ setup/teardown

setup_husk() {
	[ -x "$HUSK_BIN" ] || fail "husk binary not found at $HUSK_BIN (run make husk)"
	TEST_DIR="$(mktemp -d "${TMPDIR:-/tmp}/husk-test.XXXXXX")"
	chmod 0755 "$TEST_DIR"
	HUSK_ROOT="$TEST_DIR/root"
	BUNDLE="$TEST_DIR/bundle"
	IDS_FILE="$TEST_DIR/ids"
	NETNS_FILE="$TEST_DIR/netns"
	: >"$IDS_FILE"
	: >"$NETNS_FILE"
	mkdir -p "$BUNDLE"
	chmod 0755 "$BUNDLE"
	local rootfs
	rootfs="$(build_rootfs)" || fail "cannot build the busybox rootfs"
	cp -a "$rootfs" "$BUNDLE/rootfs"
	rm -f "$BUNDLE/rootfs/.complete"
	husk spec --bundle "$BUNDLE" || fail "husk spec --bundle $BUNDLE failed"
	[ -s "$BUNDLE/config.json" ] || fail "husk spec wrote no config.json"
	# No terminal in this issue: stdio is passed through.
	update_config '.process.terminal = false'
}

# setup is the default per-test set-up; a suite may define its own.
setup() {
	setup_husk
}

teardown() {
	teardown_husk
}

# new_id prints a fresh container id for this test and remembers it, so the
# teardown can delete it and look for cgroups named after it.
new_id() {
	local id="husk-t${BATS_TEST_NUMBER:-0}-$$-$RANDOM$RANDOM"
	echo "$id" >>"$IDS_FILE"
	echo "$id"
}

# track_bg PID: a background command the teardown kills if still there.
track_bg() {
	echo "$1" >>"$TEST_DIR/bg-pids"
}

# new_netns makes a named netns (ip netns add) the teardown will remove, and
# prints its name.
new_netns() {
	local ns="husk-test-$$-$RANDOM$RANDOM"
	ip netns add "$ns" || return 1
	echo "$ns" >>"$NETNS_FILE"
	echo "$ns"
}

teardown_husk() {
	[ -n "${TEST_DIR:-}" ] || return 0
	local leaks=() id ns pid tag
	tag="$(basename "$TEST_DIR")"

	# 0. Background husk commands the test started and did not reap.
	for pid in $(cat "$TEST_DIR/bg-pids" 2>/dev/null); do
		kill -9 "$pid" 2>/dev/null || true
	done

	# 1. Remove every container the test made (known ids + whatever list sees).
	local ids
	ids="$(cat "$IDS_FILE" 2>/dev/null; husk list -q 2>/dev/null)"
	for id in $(echo "$ids" | sort -u); do
		husk delete --force "$id" >/dev/null 2>&1 || true
	done

	# 2. The test's own netns.
	while read -r ns; do
		[ -n "$ns" ] || continue
		ip netns delete "$ns" 2>/dev/null || true
		if ip netns list | grep -qw -- "$ns"; then
			leaks+=("netns $ns still listed by ip netns")
		fi
	done <"$NETNS_FILE"

	# 3. State dirs: the root must hold nothing after delete --force.
	if [ -d "$HUSK_ROOT" ] && [ -n "$(ls -A "$HUSK_ROOT")" ]; then
		leaks+=("state left under $HUSK_ROOT: $(ls -A "$HUSK_ROOT" | tr '\n' ' ')")
	fi

	# 4. Mounts mentioning the test dir, in the host's mount table.
	local m
	m="$(grep -F "$tag" /proc/self/mountinfo || true)"
	[ -z "$m" ] || leaks+=("mounts left: $m")

	# 5. Processes: any `husk init`, or any process living in a mount
	#    namespace built on this test's rootfs (a leaked container process).
	#    In CI any `husk init` is a leak; on a shared dev machine only one
	#    whose fds, cwd or mounts point into this test's dir.
	local init_re
	init_re="($(basename "$HUSK_BIN")|husk[^ ]*) init"
	for pid in $(pgrep -f -- "$init_re"); do
		if [ "${CI:-}" = true ] || pid_mentions "$pid" "$tag"; then
			leaks+=("'husk init' process left: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)")
			echo "$pid" >>"$TEST_DIR/bg-pids"
		fi
	done
	for pid in $(leaked_pids "$tag"); do
		leaks+=("process $pid left in a mount namespace of $tag: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)")
	done

	# 6. Cgroups named after the test's container ids.
	while read -r id; do
		[ -n "$id" ] || continue
		m="$(find /sys/fs/cgroup/ -maxdepth 6 -type d -name "$id" 2>/dev/null || true)"
		[ -z "$m" ] || leaks+=("cgroups left: $(echo "$m" | tr '\n' ' ')")
	done <"$IDS_FILE"

	# Clean whatever leaked so the next tests start clean, then report.
	if [ "${#leaks[@]}" -gt 0 ]; then
		for pid in $(leaked_pids "$tag") $(cat "$TEST_DIR/bg-pids" 2>/dev/null); do
			kill -9 "$pid" 2>/dev/null || true
		done
		grep -F "$tag" /proc/self/mountinfo | awk '{print $5}' | sort -r |
			while read -r m; do umount -l "$m" 2>/dev/null || true; done
		sleep 0.2
		while read -r id; do
			[ -n "$id" ] || continue
			find /sys/fs/cgroup/ -maxdepth 6 -depth -type d -name "$id" \
				-exec rmdir {} \; 2>/dev/null || true
		done <"$IDS_FILE"
	fi
	rm -rf "$TEST_DIR" 2>/dev/null || true
	if [ "${#leaks[@]}" -gt 0 ]; then
		printf 'LEAK: %s\n' "${leaks[@]}" >&2
		return 1
	fi
}

# pid_mentions PID TAG: the process has an fd or cwd naming TAG, or its
# root (the mount at /) comes from it. Not any mount naming TAG: a mount
# the test makes on the host propagates into the mount namespaces of
# other runtimes' containers, which are not this test's.
pid_mentions() {
	local pid="$1" tag="$2"
	ls -l "/proc/$pid/fd/" "/proc/$pid/cwd" 2>/dev/null | grep -qF -- "$tag" && return 0
	awk -v t="$tag" '$5 == "/" && index($4, t) { found = 1 } END { exit !found }' "/proc/$pid/mountinfo" 2>/dev/null
}

# leaked_pids prints the pids whose root mount is this test's rootfs: their
# mountinfo's "/" entry (field 5) has a root (field 4) naming the test dir.
leaked_pids() {
	local tag="$1" f pid
	# One grep finds the few candidates (an awk per process costs seconds
	# in the VM lane's emulated guests).
	for f in $(grep -lsF -- "$tag" /proc/[0-9]*/mountinfo); do
		awk -v t="$tag" '$5 == "/" && index($4, t) { found = 1 } END { exit !found }' \
			"$f" 2>/dev/null || continue
		pid="${f#/proc/}"
		echo "${pid%/mountinfo}"
	done
}

# ----------------------------------------------------------------- config ---

# update_config [jq options...] FILTER: edit $BUNDLE/config.json with jq, e.g.
#   update_config '.process.args = ["echo","hi"]'
#   update_config --arg p "$path" '.root.path = $p'
update_config() {
	local f="$BUNDLE/config.json"
	jq "$@" "$f" >"$f.tmp" </dev/null && [ -s "$f.tmp" ] && mv "$f.tmp" "$f" ||
		fail "update_config $*: jq failed"
}

# set_args ARG...: the container's process.args.
set_args() {
	local args a
	# One jq per argument: `jq --args` would take "-c" for its own option.
	args="$(for a in "$@"; do jq -n --arg a "$a" '$a'; done | jq -cs .)" || return 1
	update_config --argjson a "$args" '.process.args = $a'
}

# set_ns TYPE [PATH]: the container gets namespace TYPE (new, or joined by
# PATH), replacing any entry of that type.
set_ns() {
	local type="$1" path="${2:-}"
	if [ -n "$path" ]; then
		update_config --arg t "$type" --arg p "$path" \
			'.linux.namespaces = ([.linux.namespaces[]? | select(.type != $t)] + [{type: $t, path: $p}])'
	else
		update_config --arg t "$type" \
			'.linux.namespaces = ([.linux.namespaces[]? | select(.type != $t)] + [{type: $t}])'
	fi
}

# del_ns TYPE: the container shares the host's namespace TYPE.
del_ns() {
	update_config --arg t "$1" '.linux.namespaces = [.linux.namespaces[]? | select(.type != $t)]'
}

# runc_spec_config: $BUNDLE/config.json replaced by the one Debian's
# `runc spec` writes (runc 1.1's defaults: a terminal, a read-only root,
# its mounts and masks), so a test meets husk as runc's users do.
runc_spec_config() {
	local runc="${RUNC:-/usr/sbin/runc}"
	[ -x "$runc" ] || skip "no runc at $runc"
	rm -f "$BUNDLE/config.json"
	(cd "$BUNDLE" && "$runc" spec) || fail "runc spec failed"
}

# requires_userns skips the test when the kernel cannot make user namespaces.
requires_userns() {
	[ -e /proc/self/ns/user ] || skip "kernel without user namespaces"
	local max
	max="$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 1)"
	[ "$max" -gt 0 ] || skip "user.max_user_namespaces is 0"
}

# ------------------------------------------------------------- containers ---

# create_bg ID [extra create flags]: `husk create` a container whose stdio
# goes to files (TEST_DIR/ID.out, ID.err), so a long-lived container never
# holds bats' output pipe or its fd 3. Fails with husk's stderr shown.
create_bg() {
	local id="$1"
	shift
	husk create --bundle "$BUNDLE" --pid-file "$TEST_DIR/$id.pid" "$@" "$id" \
		</dev/null >"$TEST_DIR/$id.out" 2>"$TEST_DIR/$id.err" 3>&- || {
		cat "$TEST_DIR/$id.err" >&2
		return 1
	}
}

# run_bg ID: `husk create` + `husk start` with stdio to files (see create_bg).
run_bg() {
	create_bg "$1" || return 1
	husk start "$1" </dev/null 3>&- || return 1
}

# container_status ID prints the status from `husk state` (a state that
# hangs counts as no answer after 10s).
container_status() {
	local HUSK_TIMEOUT=10
	husk state "$1" 2>/dev/null | jq -r .status
}

# container_pid ID prints the pid from `husk state`.
container_pid() {
	local HUSK_TIMEOUT=10
	husk state "$1" 2>/dev/null | jq -r .pid
}

# wait_for_status ID STATUS [SECONDS]: poll `husk state` until it says STATUS.
wait_for_status() {
	local id="$1" want="$2" secs="${3:-10}" got
	local deadline=$((SECONDS + secs))
	while :; do
		got="$(container_status "$id")"
		[ "$got" = "$want" ] && return 0
		[ "$SECONDS" -lt "$deadline" ] || break
		sleep 0.05
	done
	fail "container $id: status '$got', want '$want' after ${secs}s"
}

# pid_alive PID: the process exists and is not a zombie (a killed container
# process is reaped by the host's init, a moment later).
pid_alive() {
	local st
	st="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# assert_pid_gone PID [SECONDS]: the process is gone (or a zombie) in time.
assert_pid_gone() {
	local pid="$1" secs="${2:-5}" i
	for ((i = 0; i < secs * 20; i++)); do
		pid_alive "$pid" || return 0
		sleep 0.05
	done
	fail "pid $pid still alive: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
}

# assert_no_container ID: no state, no state dir, not listed.
assert_no_container() {
	local id="$1"
	[ ! -e "$HUSK_ROOT/$id" ] || fail "state dir $HUSK_ROOT/$id exists"
	run husk state "$id"
	[ "$status" -ne 0 ] || fail "husk state $id succeeded: $output"
	# list fails on a --root that does not exist (as runc): nothing to list.
	[ -d "$HUSK_ROOT" ] || return 0
	run husk list -q
	[ "$status" -eq 0 ] || fail "husk list -q failed: $output"
	! grep -qx -- "$id" <<<"$output" || fail "husk list still shows $id"
}

# assert_contains HAYSTACK NEEDLE...: each needle is a substring of haystack.
assert_contains() {
	local hay="$1" n
	shift
	for n in "$@"; do
		[[ "$hay" == *"$n"* ]] || fail "expected '$n' in: $hay"
	done
}

# ns_link PID TYPE prints readlink of /proc/PID/ns/TYPE (e.g. "uts:[4026531838]").
ns_link() {
	readlink "/proc/$1/ns/$2"
}

# start_recvtty [recvtty flags]: a console-socket receiver (tests/cmd/recvtty)
# on $SOCK printing to TEST_DIR/tty.out, its stdin from TEST_DIR/tty.in
# (empty unless written).
start_recvtty() {
	local recvtty
	recvtty="$(build_tool recvtty)" || fail "cannot build recvtty"
	touch "$TEST_DIR/tty.in"
	"$recvtty" "$@" "$SOCK" <"$TEST_DIR/tty.in" >"$TEST_DIR/tty.out" 2>"$TEST_DIR/tty.err" 3>&- &
	RECVTTY_PID=$!
	track_bg "$RECVTTY_PID"
	for _ in $(seq 100); do [ -S "$SOCK" ] && return 0; sleep 0.05; done
	fail "recvtty did not listen on $SOCK: $(cat "$TEST_DIR/tty.err")"
}

# build_tool NAME prints the path of tests/cmd/NAME, built once per run, or
# prebuilt in HUSK_TOOLS_DIR (the VM lane's guests have no Go).
build_tool() {
	if [ -n "${HUSK_TOOLS_DIR:-}" ] && [ -x "$HUSK_TOOLS_DIR/$1" ]; then
		echo "$HUSK_TOOLS_DIR/$1"
		return 0
	fi
	local out="$HUSK_TEST_CACHE/bin/$1"
	mkdir -p "$HUSK_TEST_CACHE/bin"
	(
		flock 9
		cd "$REPO_ROOT" && go build -o "$out" "./tests/cmd/$1"
	) 9>"$HUSK_TEST_CACHE/.build.lock" >&2 || return 1
	echo "$out"
}

# ------------------------------------------------------------------ CRIU ---

# CRIU's first checkpoint with a cgroup mode other than ignore turns the
# cgroup2 mount option nsdelegate off for the rest of the boot (CRIU issue
# 3029). A suite that checkpoints saves it in setup_file
# (nsdelegate_save) and puts it back in teardown (nsdelegate_restore),
# so the suites after it see the host they expect.
nsdelegate_on() {
	grep -qE ' /sys/fs/cgroup .* cgroup2 .*nsdelegate' /proc/self/mountinfo
}

nsdelegate_save() {
	export HUSK_NSDELEGATE=""
	if nsdelegate_on; then HUSK_NSDELEGATE=1; fi
}

nsdelegate_restore() {
	[ -n "${HUSK_NSDELEGATE:-}" ] || return 0
	nsdelegate_on || mount -o remount,nsdelegate /sys/fs/cgroup
}

# create_fails_with TEXT...: husk create fails, says each TEXT, leaves nothing.
create_fails_with() {
	local id
	id="$(new_id)"
	# Output to files: a create that wrongly succeeds leaves an init
	# holding whatever it was given, which would hang bats' pipe.
	! husk create --bundle "$BUNDLE" "$id" </dev/null >"$TEST_DIR/create.out" 2>"$TEST_DIR/create.err" 3>&- ||
		fail "create succeeded"
	assert_contains "$(cat "$TEST_DIR/create.err")" "$@"
	assert_no_container "$id"
}
