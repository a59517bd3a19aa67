# Shared by the LSM guests' suites (lsm-apparmor.bats in setup c,
# lsm-selinux.bats in setup d): runc and husk run the same checks, side by
# side, on the same bundle.

load ../../integration/helpers

RUNC="${RUNC:-/usr/sbin/runc}"

# rt RUNTIME ARGS...: husk, or Debian's runc with its own --root in the
# test's dir (the teardown deletes what it left).
rt() {
	local r="$1"
	shift
	case "$r" in
	husk) husk "$@" ;;
	runc) timeout -k 5 "$HUSK_TIMEOUT" "$RUNC" --root "$TEST_DIR/runc-root" "$@" ;;
	*) fail "rt: unknown runtime $r" ;;
	esac
}

# rt_run_d RUNTIME ID: start the bundle's container detached, its stdio on
# /dev/null (a pipe of bats would keep `run` waiting).
rt_run_d() {
	rt "$1" run -d --bundle "$BUNDLE" "$2" </dev/null >"$TEST_DIR/run-d.out" 2>&1 ||
		fail "$1 run -d $2: $(cat "$TEST_DIR/run-d.out")"
}

# rt_pid RUNTIME ID: the container's pid 1 as the host sees it.
rt_pid() {
	rt "$1" state "$2" | jq -r .pid
}

# lsm_teardown: runc's containers first, then husk's usual leak checks.
lsm_teardown() {
	local id
	if [ -d "$TEST_DIR/runc-root" ]; then
		for id in $(cat "$IDS_FILE" 2>/dev/null); do
			rt runc delete --force "$id" >/dev/null 2>&1 || true
		done
		[ -z "$(ls -A "$TEST_DIR/runc-root" 2>/dev/null)" ] ||
			echo "runc left state: $(ls -A "$TEST_DIR/runc-root")" >&2
		rm -rf "$TEST_DIR/runc-root"
	fi
	teardown_husk
}

# attr FILE: an LSM attribute without its trailing NUL and newline.
attr() {
	tr -d '\0\n' <"$1"
}

# exec_attr_is RUNTIME WANT EXEC-ARGS...: `RUNTIME exec EXEC-ARGS...`
# succeeds and prints WANT (the exec'd process's /proc/self/attr/current).
exec_attr_is() {
	local r="$1" want="$2"
	shift 2
	run rt "$r" exec "$@"
	[ "$status" -eq 0 ] || fail "$r exec $*: $output"
	[ "${output//$'\0'/}" = "$want" ] || fail "$r exec $*: runs as '$output', want '$want'"
}

# pid_attr_is RUNTIME PID WANT: the host sees PID's LSM label as WANT.
pid_attr_is() {
	local got
	got="$(attr "/proc/$2/attr/current")"
	[ "$got" = "$3" ] || fail "$1: pid 1 ($2) runs as '$got', want '$3'"
}

# start_labelled RUNTIME ID WANT: run the bundle detached as ID (a sleep),
# and check its pid 1 and an exec'd process both carry the LSM label WANT;
# CTR_PID is its pid 1.
start_labelled() {
	local r="$1" id="$2" want="$3"
	set_args sleep 600
	rt_run_d "$r" "$id"
	CTR_PID="$(rt_pid "$r" "$id")"
	pid_attr_is "$r" "$CTR_PID" "$want"
	exec_attr_is "$r" "$want" "$id" cat /proc/self/attr/current
}
