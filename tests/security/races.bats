#!/usr/bin/env bats
# Races and refusals of issue 26 (findings 4, 7 and 8, as found at
# b947039): `delete -f` racing an exec, `delete --force` after husk was
# killed during create or when the recorded pid names another task by
# now, and a bundle of another runtime-spec major version.
# HUSK_RACE_N sets the rounds of the two loops (default 500, the issue's).

load helpers

RACE_N="${HUSK_RACE_N:-500}"

setup() {
	setup_husk
	TAG="$(basename "$TEST_DIR")"
	mkfifo "$TEST_DIR/never"
	exec 9<>"$TEST_DIR/never"
}

teardown() {
	exec 9>&-
	teardown_husk
}

# pause_ms MS: sleep a random 0 to MS-1 milliseconds without forking
# (`read -t` on a FIFO nobody writes).
pause_ms() {
	read -rt "$(printf '0.%03d' $((RANDOM % $1)))" -u 9 || true
}

# cgroup_dirs PID: every cgroup directory of PID, one per line.
cgroup_dirs() {
	local hid ctrls rel
	while IFS=: read -r hid ctrls rel; do
		if [ -z "$ctrls" ]; then
			echo "/sys/fs/cgroup/unified$rel"
		else
			echo "/sys/fs/cgroup/${ctrls#name=}$rel"
		fi
	done <"/proc/$1/cgroup" | while read -r d; do [ -d "$d" ] && echo "$d"; done | sort -u
}

# make_sub DIRS: a sub-cgroup "sub" in each directory (exec --cgroup sub).
make_sub() {
	local d
	for d in $1; do
		mkdir "$d/sub"
		if [ -e "$d/cpuset.cpus" ]; then
			cat "$d/cpuset.cpus" >"$d/sub/cpuset.cpus"
			cat "$d/cpuset.mems" >"$d/sub/cpuset.mems"
		fi
	done
}

# nothing_left ID DIRS WHAT: no state dir of ID and none of its cgroup
# directories DIRS (a process left would keep its cgroup).
nothing_left() {
	local d
	[ ! -e "$HUSK_ROOT/$1" ] || fail "$3: state dir of $1 left"
	for d in $2; do
		[ ! -d "$d" ] || fail "$3: cgroup $d left, holding: $(cat "$d/cgroup.procs" 2>/dev/null | tr '\n' ' ')"
	done
}

# exec_storm EXEC-ARGS...: up to 20 `husk exec EXEC-ARGS`, one after the
# other, until one fails (the container is gone).
exec_storm() {
	local k
	for k in $(seq 20); do
		"$HUSK_BIN" --root "$HUSK_ROOT" exec "$@" </dev/null >/dev/null 2>&1 3>&- || return 0
	done
}

# race_exec_loop: the rounds of finding 4's test, run under subreaper (a
# detached exec's process, orphaned, must be reaped at once for its
# container's init to finish dying: see tests/cmd/subreaper). In each
# round three storms of execs of one mode run into a container while a
# delete -f removes it, a random moment after they began.
race_exec_loop() {
	set -e
	exec 9<>"$TEST_DIR/never"
	local i id init dirs mode storms k flags cmd
	local modes=(plain tty detached detached-tty cgroup)
	for i in $(seq "$RACE_N"); do
		id="$(new_id)"
		run_bg "$id" || fail "round $i: run"
		init="$(cat "$TEST_DIR/$id.pid")"
		dirs="$(cgroup_dirs "$init")"
		mode="${modes[i % ${#modes[@]}]}"
		cmd=(true)
		case "$mode" in
		plain) flags=() ;;
		tty) flags=(-t) ;;
		detached) flags=(-d) cmd=(sleep 1000) ;;
		detached-tty) flags=(-d -t --console-socket "$SOCK") cmd=(sleep 1000) ;;
		cgroup)
			make_sub "$dirs"
			flags=(--cgroup sub)
			;;
		esac
		storms=()
		for k in 1 2 3; do
			exec_storm "${flags[@]}" "$id" "${cmd[@]}" &
			storms+=($!)
		done
		pause_ms 40
		husk delete -f "$id" >"$TEST_DIR/delete.out" 2>&1 || fail "round $i ($mode): delete -f: $(cat "$TEST_DIR/delete.out")"
		wait "${storms[@]}"
		nothing_left "$id" "$dirs" "round $i ($mode)"
	done
}

@test "finding 4: delete -f racing exec (plain, tty, detached, detached tty, --cgroup) leaves no process and no cgroup, 500 rounds" {
	SOCK="$TEST_DIR/console.sock"
	"$(build_tool recvtty)" -many "$SOCK" </dev/null >/dev/null 2>&1 3>&- &
	track_bg $!
	for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
	set_args sleep 1000
	export -f race_exec_loop exec_storm husk fail run_bg create_bg new_id cgroup_dirs make_sub nothing_left pause_ms
	export HUSK_BIN HUSK_ROOT HUSK_TIMEOUT BUNDLE TEST_DIR IDS_FILE BATS_TEST_NUMBER SOCK RACE_N
	"$(build_tool subreaper)" bash -c race_exec_loop 3>&- || fail "the race loop failed (above)"
	no_process_left "$TAG" "the test"
}

@test "finding 4: delete -f kills a process that is in some of the container's cgroups only (an exec's husk init while it enters them) and removes them all" {
	local id dirs d k n sleeper
	set_args sleep 1000
	n=0
	while :; do
		id="$(new_id)"
		run_bg "$id"
		dirs="$(cgroup_dirs "$(cat "$TEST_DIR/$id.pid")")"
		[ "$(wc -l <<<"$dirs")" -gt 1 ] || skip "needs more than one cgroup hierarchy"
		n=$((n + 1))
		d="$(sed -n "${n}p" <<<"$dirs")"
		if [ -z "$d" ]; then
			husk delete -f "$id"
			break
		fi
		# Each hierarchy's directory in turn holds a process the others do
		# not: an exec's husk init enters the unified one at birth and each
		# v1 one in turn. Its parent reaps it at once, as an exec's husk
		# reaps its husk init (a zombie keeps a v1 cgroup busy).
		rm -f "$TEST_DIR/sleeper.pid"
		"$(build_tool subreaper)" sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec sleep 1000' \
			"$TEST_DIR/sleeper.pid" </dev/null >/dev/null 2>&1 3>&- &
		track_bg $!
		until [ -s "$TEST_DIR/sleeper.pid" ]; do read -rt 0.01 -u 9 || true; done
		sleeper="$(cat "$TEST_DIR/sleeper.pid")"
		track_bg "$sleeper"
		echo "$sleeper" >"$d/cgroup.procs"
		run husk delete -f "$id"
		[ "$status" -eq 0 ] || fail "$d: delete -f: $output"
		nothing_left "$id" "$dirs" "$d"
		! kill -0 "$sleeper" 2>/dev/null || fail "$d: process $sleeper is still running"
	done
}

@test "finding 8: delete --force after kill -9 at any point of create succeeds, 500 of 500, leaving nothing" {
	local i id pid st out killed=0
	set_args sleep 1000
	for i in $(seq "$RACE_N"); do
		id="$(new_id)"
		"$HUSK_BIN" --root "$HUSK_ROOT" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- &
		pid=$!
		# A create takes about 40 ms here; every fourth try waits longer,
		# past its end.
		pause_ms $((i % 4 ? 45 : 150))
		kill -9 "$pid" 2>/dev/null || true
		st=0
		wait "$pid" 2>/dev/null || st=$?
		[ "$st" -ne 137 ] || killed=$((killed + 1))
		out="$(husk delete --force "$id" 2>&1)" || assert_contains "$out" "does not exist" ||
			fail "try $i: delete --force: $out"
		[ ! -e "$HUSK_ROOT/$id" ] || fail "try $i: state dir left"
	done
	local left
	left="$(find /sys/fs/cgroup/ -maxdepth 6 -type d -name "husk-t${BATS_TEST_NUMBER}-$$-*" 2>/dev/null || true)"
	[ -z "$left" ] || fail "cgroups left: $left"
	no_process_left "$TAG" "the test"
	echo "# $killed of $RACE_N creates killed before they finished" >&3
}

# reuse_pid MODE PID: pid-reuse gives PID to a new thread (MODE thread)
# or process (process) of its own; sets REUSER (its pid), REUSED_START.
reuse_pid() {
	local tool try line
	tool="$(build_tool pid-reuse)" || fail "cannot build pid-reuse"
	mkfifo "$TEST_DIR/reuse.in.$1"
	for try in $(seq 20); do
		"$tool" "$1" "$2" <"$TEST_DIR/reuse.in.$1" >"$TEST_DIR/reuse.out" 2>"$TEST_DIR/reuse.err" 3>&- &
		REUSER=$!
		track_bg "$REUSER"
		exec 8>"$TEST_DIR/reuse.in.$1"
		if wait_line "$TEST_DIR/reuse.out"; then
			read -r line REUSED_START <"$TEST_DIR/reuse.out"
			return 0
		fi
		exec 8>&-
		wait "$REUSER" 2>/dev/null || true
	done
	fail "pid $2 could not be reused: $(cat "$TEST_DIR/reuse.err")"
}

# wait_line FILE: until FILE has a line or its writer is gone.
wait_line() {
	while kill -0 "$REUSER" 2>/dev/null; do
		[ -s "$1" ] && return 0
		read -rt 0.01 -u 9 || true
	done
	[ -s "$1" ]
}

# dead_init ID: create ID, kill its init from outside (the container dies
# with it) and wait until its pid is free; prints the pid.
dead_init() {
	local pid
	create_bg "$1" || return 1
	pid="$(cat "$TEST_DIR/$1.pid")"
	kill -9 "$pid"
	while [ -e "/proc/$pid" ]; do read -rt 0.01 -u 9 || true; done
	echo "$pid"
}

@test "finding 8: delete --force when the recorded init pid is another process or a thread of one by now: the cleanup finishes, the other task lives" {
	command -v gcc >/dev/null || skip "needs gcc for tests/cmd/pid-reuse (cgo)"
	[ -w /proc/sys/kernel/ns_last_pid ] || skip "needs a writable /proc/sys/kernel/ns_last_pid"
	set_args sleep 1000
	local mode forge id pid out
	for mode in process thread; do
		for forge in no yes; do
			# A process reused with the same start time (in clock ticks)
			# as the init's cannot be told from it by the state: pids are
			# handed out in a cycle, so this needs the whole pid space to
			# go round within one tick, and is not tried.
			[ "$mode/$forge" != process/yes ] || continue
			id="$(new_id)"
			pid="$(dead_init "$id")" || fail "create $id"
			reuse_pid "$mode" "$pid"
			if [ "$forge" = yes ]; then
				# As if the thread had started in the same clock tick as the
				# init: the recorded start time matches it too.
				jq --argjson s "$REUSED_START" '.init_start = $s' "$HUSK_ROOT/$id/state.json" >"$TEST_DIR/state.json"
				cp "$TEST_DIR/state.json" "$HUSK_ROOT/$id/state.json"
			fi
			out="$(husk delete --force "$id" 2>&1)" || fail "$mode (same start: $forge): delete --force: $out"
			assert_no_container "$id"
			kill -0 "$REUSER" 2>/dev/null || fail "$mode (same start: $forge): delete --force killed pid $pid's new owner"
			[ -e "/proc/$pid" ] || fail "$mode (same start: $forge): task $pid is gone"
			exec 8>&-
			wait "$REUSER" || true
			rm -f "$TEST_DIR/reuse.in.$mode" "$TEST_DIR/reuse.out"
		done
	done
}

@test "finding 7: ociVersion of another major version than 1 is refused naming the field and the value, leaving nothing" {
	local v id
	set_args true
	for v in 2.0.0 0.9.0; do
		update_config --arg v "$v" '.ociVersion = $v'
		id="$(new_id)"
		run ! husk run --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$output" "ociVersion: \"$v\" has major version ${v%%.*}"
		assert_no_container "$id"
	done
	update_config '.ociVersion = "1.0.2"'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
}
