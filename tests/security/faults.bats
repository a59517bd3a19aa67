#!/usr/bin/env bats
# Fault injection: kill -9 of husk at a random point of its whole run
# (0-200 ms) for create, run, exec, start and delete, then `delete
# --force`. Nothing may remain: no state dir, mount, cgroup, netns,
# process. HUSK_FAULT_N sets the tries per command (CI: a bounded 12).

load helpers

FAULT_N="${HUSK_FAULT_N:-12}"

setup() {
	setup_husk
	set_args sleep 1000
	TAG="$(basename "$TEST_DIR")"
	KILLS=0
	mkfifo "$TEST_DIR/never"
	exec 9<>"$TEST_DIR/never"
}

teardown() {
	exec 9>&-
	teardown_husk
}

# random_delay MS prints a delay between 0 and MS-1 milliseconds, in seconds.
random_delay() {
	printf '0.%03d' $((RANDOM % $1))
}

# kill_at_random MS CMD...: run husk CMD in the background (stdio to
# files), SIGKILL it after a random delay below MS milliseconds (the
# command's whole duration: 200 for create, run and exec; start and
# delete are done in about 30 and 10 ms here), and reap it. KILLS counts
# the kills that found husk still running.
kill_at_random() {
	local ms="$1" pid
	shift
	# The command stops itself just before the exec of husk, so the delay
	# counts from husk's start, not from bash's fork; `read -t` on a FIFO
	# nobody writes sleeps without forking a sleep(1).
	bash -c 'kill -STOP $$; exec "$@"' fault "$HUSK_BIN" --root "$HUSK_ROOT" "$@" \
		</dev/null >>"$TEST_DIR/fault.out" 2>&1 3>&- &
	pid=$!
	until [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = T ]; do read -rt 0.001 -u 9 || true; done
	kill -CONT "$pid"
	read -rt "$(random_delay "$ms")" -u 9 || true
	kill -9 "$pid" 2>/dev/null || true
	local st=0
	wait "$pid" 2>/dev/null || st=$?
	[ "$st" -ne 137 ] || KILLS=$((KILLS + 1)) # 128 + SIGKILL: it had not finished
}

# force_delete_and_check ID: `delete --force` must succeed (or say the
# container does not exist), and leave nothing of it behind.
force_delete_and_check() {
	local id="$1" out m
	out="$(husk delete --force "$id" 2>&1)" || assert_contains "$out" "does not exist"
	[ ! -e "$HUSK_ROOT/$id" ] || fail "$id: state dir left: $(ls -A "$HUSK_ROOT/$id")"
	m="$(grep -F "$TAG" /proc/self/mountinfo || true)"
	[ -z "$m" ] || fail "$id: mounts left: $m"
	m="$(find /sys/fs/cgroup/ -maxdepth 6 -type d -name "$id" 2>/dev/null || true)"
	[ -z "$m" ] || fail "$id: cgroups left: $m"
	no_process_left "$TAG" "$id"
	[ -z "$(ip netns list 2>/dev/null | grep -F "$id")" ] || fail "$id: netns left"
}

@test "faults: kill -9 during create, then delete --force, leaves nothing" {
	local i id
	for i in $(seq "$FAULT_N"); do
		id="$(new_id)"
		# Every other try within the first 40 ms, where a create on an idle
		# machine is still at work.
		kill_at_random $((i % 2 ? 200 : 40)) create --bundle "$BUNDLE" "$id"
		force_delete_and_check "$id"
	done
	echo "$KILLS of $FAULT_N creates killed before they finished"
}

@test "faults: kill -9 during run, then delete --force, leaves nothing" {
	local i id
	for i in $(seq "$FAULT_N"); do
		id="$(new_id)"
		kill_at_random $((i % 2 ? 200 : 40)) run --bundle "$BUNDLE" "$id"
		force_delete_and_check "$id"
	done
	echo "$KILLS of $FAULT_N runs killed"
}

@test "faults: kill -9 during exec, then delete --force, leaves nothing" {
	local i id
	for i in $(seq "$FAULT_N"); do
		id="$(new_id)"
		run_bg "$id"
		kill_at_random $((i % 2 ? 200 : 40)) exec "$id" sleep 1000
		force_delete_and_check "$id"
	done
	echo "$KILLS of $FAULT_N execs killed"
}

@test "faults: kill -9 during start, then delete --force, leaves nothing" {
	local i id
	for i in $(seq "$FAULT_N"); do
		id="$(new_id)"
		create_bg "$id"
		kill_at_random 40 start "$id"
		force_delete_and_check "$id"
	done
	echo "$KILLS of $FAULT_N starts killed"
}

@test "faults: kill -9 during delete, then delete --force, leaves nothing" {
	local i id
	for i in $(seq "$FAULT_N"); do
		id="$(new_id)"
		run_bg "$id"
		kill_at_random 15 delete --force "$id"
		force_delete_and_check "$id"
	done
	echo "$KILLS of $FAULT_N deletes killed"
}
