#!/usr/bin/env bats
# Rootless husk on a pure cgroup v2 host: a user's container lands in the
# cgroup subtree delegated to that user, with its limits, and ps, pause,
# resume and kill --all work there; without a delegation it runs without
# cgroups and those commands say why.
#   setup b (no systemd): the suite delegates a subtree by hand, the way
#     systemd does (Delegate=yes), and places the user's shell in it;
#   setup a (systemd): the user's real user@UID.service, and a scope with
#     Delegate=yes of that user manager (systemd-run --user --scope); and
#     --systemd-cgroup as the user: refused, saying why, without a D-Bus
#     session bus, and a scope of the user's own systemd with one.
# Every check reads the cgroup files from the host side of the guest.

load ../../integration/helpers
load ../../integration/rootless-user

setup_file() {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] ||
		skip "needs a pure cgroup v2 host (/sys/fs/cgroup is $(stat -f -c %T /sys/fs/cgroup)); the VM lane has one"
	rl_user_create
	if [ "$(cat /proc/1/comm)" = systemd ]; then
		# Debian's image has no pam_systemd, which gives the user manager
		# XDG_RUNTIME_DIR at login: say it in a drop-in of this user's unit.
		export RL_DROPIN="/run/systemd/system/user@$RL_UID.service.d"
		mkdir -p "$RL_DROPIN"
		printf '[Service]\nEnvironment=XDG_RUNTIME_DIR=%s\n' "$RL_XDG" >"$RL_DROPIN/husk-test.conf"
		systemctl daemon-reload
		systemctl start "user@$RL_UID.service" || {
			systemctl status --no-pager "user@$RL_UID.service" >&3 2>&1
			return 1
		}
	else
		mkdir -p "$RL_XDG"
		chown "$RL_USER:$RL_USER" "$RL_XDG"
		chmod 0700 "$RL_XDG"
	fi
}

teardown_file() {
	[ -n "${RL_USER:-}" ] || return 0
	if [ -n "${RL_DROPIN:-}" ]; then
		systemctl stop "user@$RL_UID.service" "user-runtime-dir@$RL_UID.service" "user-$RL_UID.slice" 2>/dev/null || true
		rm -rf "$RL_DROPIN"
		systemctl daemon-reload
	fi
	rl_user_remove
}

setup() {
	# A test for the other setup is skipped before anything is made.
	case "$BATS_TEST_DESCRIPTION" in
	*"(setup a)"*) need_setup a ;;
	*"(setup b)"*) need_setup b ;;
	esac
	setup_husk
	rl_bundle
}

teardown() {
	[ -n "${TEST_DIR:-}" ] || return 0
	local left=0
	rl_teardown || left=1
	if [ -s "$TEST_DIR/user-units" ]; then
		as_user systemctl --user stop dbus.service dbus.socket 2>/dev/null || true
		rm -f $(cat "$TEST_DIR/user-units") "$RL_XDG/bus"
		as_user systemctl --user daemon-reload 2>/dev/null || true
	fi
	if [ -n "${DELEG:-}" ] && [ -d "$DELEG" ]; then
		find "$DELEG" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
		rmdir "$DELEG" 2>/dev/null || true
	fi
	teardown_husk || return 1
	return "$left"
}

need_setup() {
	[ "${HUSK_VM_SETUP:-}" = "$1" ] || skip "for VM setup $1 (this is ${HUSK_VM_SETUP:-not a VM lane guest})"
}

# check_delegated ID PARENT: the user's running container ID has its
# cgroup at PARENT/husk/ID (a path in the v2 hierarchy), made by the user,
# with the limits of the spec; ps lists its processes, pause and resume
# freeze and thaw it, kill --all kills them all, and delete leaves no
# cgroup (not even PARENT/husk) and no state.
check_delegated() {
	local id="$1" parent="$2" pid epid cg
	cg="/sys/fs/cgroup$parent/husk/$id"
	pid="$(uhusk state "$id" | jq -r .pid)"
	[ "$(cat "/proc/$pid/cgroup")" = "0::$parent/husk/$id" ] || fail "init is in $(cat "/proc/$pid/cgroup"), not $parent/husk/$id"
	[ "$(stat -c %U "$cg")" = "$RL_USER" ] || fail "$cg belongs to $(stat -c %U "$cg")"
	[ "$(cat "$cg/memory.max")" = 33554432 ] || fail "memory.max: $(cat "$cg/memory.max")"
	[ "$(cat "$cg/pids.max")" = 20 ] || fail "pids.max: $(cat "$cg/pids.max")"

	# exec from inside the user's subtree joins the container's cgroup.
	"$IN_DELEG" "$RL_BIN" exec -d "$id" sleep 300 </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
		fail "exec -d from inside the subtree: $(cat "$TEST_DIR/err")"
	epid="$(grep -vx "$pid" "$cg/cgroup.procs")"
	[ -n "$epid" ] || fail "no exec'd process in $cg: $(cat "$cg/cgroup.procs")"
	# From outside it (the lane's cgroup is root's) the kernel refuses the
	# move: the process runs in its caller's cgroup, with a warning (runc's way).
	run -0 uhusk exec "$id" cat /proc/self/cgroup
	assert_contains "$output" "stays in the caller's cgroup"
	# Outside the root of the container's cgroup namespace.
	[[ "${lines[-1]}" == "0::/../"* ]] || fail "exec from outside: $output"
	run -0 uhusk ps --format json "$id"
	[ "$(jq -c 'sort' <<<"$output")" = "$(printf '%s\n' "$pid" "$epid" | sort -n | jq -cs .)" ] ||
		fail "ps --format json: $output (cgroup.procs: $(cat "$cg/cgroup.procs" | xargs))"
	run -0 uhusk ps "$id"
	assert_contains "$output" "sleep 100" "sleep 300"

	run -0 uhusk pause "$id"
	[ "$(uhusk state "$id" | jq -r .status)" = paused ] || fail "after pause: $(uhusk state "$id" | jq -r .status)"
	[ "$(cat "$cg/cgroup.freeze")" = 1 ] || fail "cgroup.freeze after pause: $(cat "$cg/cgroup.freeze")"
	grep -qx 'frozen 1' "$cg/cgroup.events" || fail "cgroup.events after pause: $(cat "$cg/cgroup.events")"
	run -0 uhusk resume "$id"
	[ "$(uhusk state "$id" | jq -r .status)" = running ] || fail "after resume: $(uhusk state "$id" | jq -r .status)"
	[ "$(cat "$cg/cgroup.freeze")" = 0 ] || fail "cgroup.freeze after resume: $(cat "$cg/cgroup.freeze")"

	run -0 uhusk kill --all "$id" KILL
	local i
	for i in $(seq 100); do
		[ -z "$(cat "$cg/cgroup.procs")" ] && ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	[ -z "$(cat "$cg/cgroup.procs")" ] || fail "left in $cg after kill --all: $(cat "$cg/cgroup.procs" | xargs)"
	run -0 uhusk delete "$id"
	[ ! -e "$cg" ] || fail "$cg left after delete"
	[ ! -e "/sys/fs/cgroup$parent/husk" ] || fail "/sys/fs/cgroup$parent/husk left after delete"
	[ -z "$(ls -A "$RL_XDG/husk")" ] || fail "left in $RL_XDG/husk: $(ls -A "$RL_XDG/husk")"
}

@test "rootless v2 (setup b): a subtree delegated by hand as systemd does holds the container: limits, ps, pause, kill --all; delete leaves nothing" {
	local id
	id="$(new_id)"
	DELEG="/sys/fs/cgroup/huskrl-deleg-$$-$RANDOM"
	mkdir "$DELEG"
	# Delegate=yes: the parent enables the controllers for it; the user owns
	# the directory and the files that move processes and enable them below.
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	grep -qw pids /sys/fs/cgroup/cgroup.subtree_control || echo +pids >/sys/fs/cgroup/cgroup.subtree_control
	chown "$RL_USER" "$DELEG" "$DELEG/cgroup.procs" "$DELEG/cgroup.subtree_control" "$DELEG/cgroup.threads"
	as_user mkdir "$DELEG/shell"
	update_config '.linux.resources = {"memory": {"limit": 33554432}, "pids": {"limit": 20}}'
	set_args sleep 100
	# The user's shell, placed in its subtree by root (as systemd places
	# the user manager), runs husk run.
	in_shell sh -c 'cat /proc/self/cgroup; exec "$0" run -d --bundle "$1" "$2"' "$RL_BIN" "$BUNDLE" "$id" \
		</dev/null >"$TEST_DIR/out" 2>"$TEST_DIR/err" 3>&- || fail "husk run as $RL_USER: $(cat "$TEST_DIR/err")"
	[ "$(cat "$TEST_DIR/out")" = "0::/${DELEG##*/}/shell" ] || fail "the user's shell ran in $(cat "$TEST_DIR/out")"
	IN_DELEG=in_shell check_delegated "$id" "/${DELEG##*/}"
}

# in_shell CMD...: CMD as the user from inside $DELEG/shell.
in_shell() (
	echo "$BASHPID" >"$DELEG/shell/cgroup.procs"
	as_user "$@"
)

@test "rootless v2 (setup b): without a delegated subtree the container has no cgroup; a limit is refused; ps and pause say why" {
	local id pid
	id="$(new_id)"
	update_config '.linux.resources = {"pids": {"limit": 20}}'
	set_args true
	run ! uhusk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "linux.resources.pids.limit" "rootless" "not writable by uid $RL_UID"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"

	update_config 'del(.linux.resources)'
	set_args sleep 100
	uhusk run -d --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || fail "run -d: $(cat "$TEST_DIR/err")"
	pid="$(uhusk state "$id" | jq -r .pid)"
	# It stays in its caller's cgroup (the lane's, root's).
	[ "$(cat "/proc/$pid/cgroup")" = "$(cat /proc/self/cgroup)" ] ||
		fail "init is in $(cat "/proc/$pid/cgroup"), the caller in $(cat /proc/self/cgroup)"
	local op
	for op in ps pause; do
		run ! uhusk "$op" "$id"
		[ "${#lines[@]}" -eq 1 ] || fail "$op: more than one line: $output"
		assert_contains "$output" "container $id has no cgroups" "created rootless" "no cgroup was writable"
	done
	[ "$(uhusk state "$id" | jq -r .status)" = running ] || fail "status after a refused pause: $(uhusk state "$id" | jq -r .status)"
	run -0 uhusk kill --all "$id" KILL
	run -0 uhusk delete --force "$id"
}

@test "rootless v2 (setup a): systemd's user@UID.service delegates to the user: a scope with Delegate=yes runs husk; limits, ps, pause, kill --all; nothing left" {
	local id svc="/user.slice/user-$RL_UID.slice/user@$RL_UID.service"
	id="$(new_id)"
	[ "$(systemctl show -P ActiveState "user@$RL_UID.service")" = active ] || fail "user@$RL_UID.service is not active"
	[ "$(stat -c %U "/sys/fs/cgroup$svc")" = "$RL_USER" ] || fail "/sys/fs/cgroup$svc belongs to $(stat -c %U "/sys/fs/cgroup$svc")"
	update_config '.linux.resources = {"memory": {"limit": 33554432}, "pids": {"limit": 20}}'
	set_args sleep 100
	# systemd-run reaches the user manager on $XDG_RUNTIME_DIR/systemd/private
	# (no session bus in the image).
	as_user systemd-run --user --scope --quiet -p Delegate=yes \
		sh -c 'cat /proc/self/cgroup; exec "$0" run -d --bundle "$1" "$2"' "$RL_BIN" "$BUNDLE" "$id" \
		</dev/null >"$TEST_DIR/out" 2>"$TEST_DIR/err" 3>&- || fail "husk run in a user scope: $(cat "$TEST_DIR/err")"
	[[ "$(cat "$TEST_DIR/out")" == "0::$svc/app.slice/run-"*.scope ]] || fail "the user's scope: $(cat "$TEST_DIR/out")"
	IN_DELEG=in_scope check_delegated "$id" "$svc"
}

# in_scope CMD...: CMD as the user in a new scope of its user manager.
in_scope() {
	as_user systemd-run --user --scope --quiet -p Delegate=yes "$@"
}

@test "rootless v2 (setup a): --systemd-cgroup as a user: refused naming the reason without a session bus; with one, a scope of its own systemd with the limits, stopped by delete" {
	local id unit cg pid
	id="$(new_id)"
	# The image has no dbus-user-session: no session bus yet.
	[ ! -e "$RL_XDG/bus" ] || fail "the user has a session bus at $RL_XDG/bus already"
	set_args true
	run ! uhusk --systemd-cgroup run --bundle "$BUNDLE" "$id" </dev/null
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line: $output"
	assert_contains "$output" "--systemd-cgroup" "uid $RL_UID" "D-Bus session bus" "$RL_XDG/bus does not exist" "dbus-user-session"
	[ -z "$(ls -A "$RL_XDG/husk" 2>/dev/null)" ] || fail "left: $(ls -A "$RL_XDG/husk")"
	[ -z "$(systemctl list-units --all --plain --no-legend "*$id*")" ] || fail "a unit left: $(systemctl list-units --all --plain --no-legend "*$id*")"

	# dbus-user-session's two user units, for this test.
	mkdir -p /run/systemd/user
	cat >/run/systemd/user/dbus.socket <<-'EOS'
		[Socket]
		ListenStream=%t/bus
	EOS
	cat >/run/systemd/user/dbus.service <<-'EOS'
		[Unit]
		Requires=dbus.socket
		[Service]
		ExecStart=/usr/bin/dbus-daemon --session --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only
	EOS
	echo /run/systemd/user/dbus.socket /run/systemd/user/dbus.service >"$TEST_DIR/user-units"
	as_user systemctl --user daemon-reload
	as_user systemctl --user start dbus.socket dbus.service || fail "the user's dbus did not start"
	local i
	for i in $(seq 50); do
		as_user busctl --user --no-pager list 2>/dev/null | grep -q '^org.freedesktop.systemd1 ' && break
		sleep 0.2
	done
	as_user busctl --user --no-pager list | grep -q '^org.freedesktop.systemd1 ' || fail "the user manager is not on its session bus"

	unit="husk-$id.scope"
	cg="/sys/fs/cgroup/user.slice/user-$RL_UID.slice/user@$RL_UID.service/user.slice/$unit"
	update_config '.linux.resources = {"memory": {"limit": 33554432}, "pids": {"limit": 20}}'
	set_args sleep 100
	# The user manager can move husk's init into the scope only from a
	# cgroup of its own (as for runc: a user scope, not a login session's).
	in_scope "$RL_BIN" --systemd-cgroup run -d --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
		fail "husk --systemd-cgroup run as $RL_USER: $(cat "$TEST_DIR/err")"
	pid="$(uhusk state "$id" | jq -r .pid)"
	[ "$(cat "/proc/$pid/cgroup")" = "0::${cg#/sys/fs/cgroup}" ] || fail "init is in $(cat "/proc/$pid/cgroup"), not ${cg#/sys/fs/cgroup}"
	[ "$(as_user systemctl --user show -P MemoryMax "$unit")" = 33554432 ] || fail "MemoryMax: $(as_user systemctl --user show -P MemoryMax "$unit")"
	[ "$(cat "$cg/memory.max")" = 33554432 ] || fail "memory.max: $(cat "$cg/memory.max")"
	[ "$(cat "$cg/pids.max")" = 20 ] || fail "pids.max: $(cat "$cg/pids.max")"
	run -0 uhusk ps --format json "$id"
	[ "$output" = "[$pid]" ] || fail "ps: $output"
	run -0 uhusk --systemd-cgroup pause "$id"
	[ "$(cat "$cg/cgroup.freeze")" = 1 ] || fail "cgroup.freeze after pause: $(cat "$cg/cgroup.freeze")"
	run -0 uhusk --systemd-cgroup resume "$id"
	run -0 uhusk --systemd-cgroup delete --force "$id"
	[ ! -e "$cg" ] || fail "$cg left after delete"
	[ "$(as_user systemctl --user show -P ActiveState "$unit")" = inactive ] || fail "$unit: $(as_user systemctl --user show -P ActiveState "$unit")"
	[ -z "$(ls -A "$RL_XDG/husk")" ] || fail "left in $RL_XDG/husk: $(ls -A "$RL_XDG/husk")"
}
