#!/bin/sh
# smoke.sh: runs in the arm64 guest (Debian 12, systemd as PID 1; started
# by husk-smoke.service through guest.sh) and prints TAP. husk is the arm64
# release build at /husk-vm/husk; the bundles' configs were written on the
# host (run.sh) and share one busybox rootfs. Exit status: the number of
# failed checks.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
husk=/husk-vm/husk
cfgs=/husk-vm/configs
rootfs=/tmp/rootfs
n=0 failed=0
out=/tmp/out

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for l in "$@"; do echo "# $l"; done
	[ ! -s "$out" ] || sed 's/^/#   /' "$out"
}
# bundle NAME [UID]: a bundle of config NAME over a copy of the rootfs
# (owned by UID when given: the user namespace's).
bundle() {
	b=/tmp/bundles/$1
	mkdir -p "$b"
	cp "$cfgs/$1.json" "$b/config.json"
	cp -a "$rootfs" "$b/rootfs"
	[ -z "${2:-}" ] || chown -R -h "$2:$2" "$b/rootfs"
	echo "$b"
}
# husk_run NAME [UID | --systemd-cgroup]: run config NAME in the
# foreground, output in $out, status in $rc.
husk_run() {
	rc=0
	case "${2:-}" in
	--*) "$husk" "$2" run --bundle "$(bundle "$1")" "arm64-$1" >"$out" 2>&1 </dev/null || rc=$? ;;
	*) "$husk" run --bundle "$(bundle "$1" "${2:-}")" "arm64-$1" >"$out" 2>&1 </dev/null || rc=$? ;;
	esac
}
# pid_of ID: the container's init pid (husk state).
pid_of() {
	"$husk" state "$1" 2>/dev/null | sed -n 's/^ *"pid": *\([0-9]*\),*$/\1/p'
}
# kill_stopped ID PID: husk kill ID KILL, then wait (30 s) for "stopped".
kill_stopped() {
	[ -n "$2" ] || return 2
	"$husk" kill "$1" KILL >"$out" 2>&1 || return 1
	i=0
	while [ "$i" -lt 300 ] && ! "$husk" state "$1" 2>/dev/null | grep -q '"status": *"stopped"'; do
		i=$((i + 1))
		sleep 0.1
	done
	"$husk" state "$1" >"$out" 2>&1 || true
	grep -q '"status": *"stopped"' "$out" || return 3
}
# gone ID PID: nothing of container ID is left (state, cgroup, its init PID).
gone() {
	! "$husk" list -q 2>/dev/null | grep -qx "$1" &&
		[ ! -e "/run/husk/$1" ] &&
		[ ! -e "/sys/fs/cgroup/husk-arm64/$1" ] &&
		[ ! -e "/proc/$2" ]
}

echo "1..15"
# The container rootfs: busybox-static (arm64) and its applets.
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/tmp" "$rootfs/etc"
cp /bin/busybox "$rootfs/bin/busybox"
chroot "$rootfs" /bin/busybox --install -s /bin
echo 'root:x:0:0:root:/:/bin/sh' >"$rootfs/etc/passwd"

: >"$out"
if [ "$(uname -m)" = aarch64 ] && [ "$(cat /proc/1/comm)" = systemd ] &&
	grep -q '^cgroup2 /sys/fs/cgroup cgroup2 ' /proc/mounts && ! grep -q ' cgroup ' /proc/mounts &&
	"$husk" --version >"$out" 2>&1 && grep -q '^libseccomp: 2\.' "$out"; then
	ok "guest: aarch64 kernel $(uname -r), systemd as PID 1, pure cgroup v2; husk --version: $(head -1 "$out")"
else
	not_ok "guest: aarch64, systemd, cgroup v2, husk --version" "uname -m: $(uname -m); PID 1: $(cat /proc/1/comm); cgroup mounts: $(grep cgroup /proc/mounts)"
fi

husk_run run
if [ "$rc" = 7 ] && grep -qx 'arm64-run aarch64 mkdir=0' "$out"; then
	ok "run: a container runs, mkdir works without a filter, its exit status (7) is husk's"
else
	not_ok "run" "husk run exit $rc, want 7 and 'arm64-run aarch64 mkdir=0'"
fi

# A detached container for exec, kill and delete.
id=arm64-sleep
rc=0
"$husk" run -d --bundle "$(bundle sleep)" "$id" >"$out" 2>&1 </dev/null || rc=$?
if [ "$rc" = 0 ] && "$husk" state "$id" 2>"$out" | grep -q '"status": *"running"'; then
	ok "run -d: the container is running"
else
	not_ok "run -d" "exit $rc"
fi

rc=0
"$husk" exec "$id" sh -c 'echo exec-in $(hostname) pid1=$(cat /proc/1/comm)' >"$out" 2>&1 </dev/null || rc=$?
if [ "$rc" = 0 ] && grep -qx 'exec-in husk-arm64-c pid1=sleep' "$out"; then
	ok "exec: a process joins the running container's namespaces"
else
	not_ok "exec" "exit $rc, want 'exec-in husk-arm64-c pid1=sleep'"
fi

husk_run seccomp
if [ "$rc" = 0 ] && grep -q "mkdir: can't create directory '/tmp/denied': Operation not permitted" "$out" &&
	grep -qx 'mkdir=1 touch=0 ls=0' "$out" && grep -q '^Seccomp:[[:space:]]*2' "$out"; then
	ok "seccomp: mkdirat (aarch64's 34) fails with EPERM, the rest works, filter mode 2"
else
	not_ok "seccomp" "exit $rc, want mkdir denied with EPERM, touch and ls working, Seccomp: 2"
fi

husk_run cgroup
if [ "$rc" = 0 ] && grep -qx 'memory.max=33554432 pids.max=32' "$out"; then
	ok "cgroup v2: memory.max and pids.max read back inside the container"
else
	not_ok "cgroup v2 limits" "exit $rc, want memory.max=33554432 pids.max=32"
fi

if [ "$rc" = 0 ] && grep -qx 'kmsg=denied' "$out" && grep -q 'Operation not permitted' "$out"; then
	husk_run device-allowed
	if [ "$rc" = 0 ] && grep -qx 'kmsg=written' "$out"; then
		ok "eBPF device program: writing c 1:11 is denied by default (EPERM), allowed by a devices rule"
	else
		not_ok "eBPF device program: the allowing rule" "exit $rc, want kmsg=written"
	fi
else
	not_ok "eBPF device program: the default denies c 1:11" "exit $rc, want kmsg=denied and EPERM"
fi

husk_run userns 100000
if [ "$rc" = 0 ] && grep -Eq '^ +0 +100000 +65536$' "$out" && grep -qx 'uid=0 file-owner=0' "$out"; then
	ok "user namespace: root in the container is 100000 outside, the rootfs of 100000 is root's"
else
	not_ok "user namespace" "exit $rc, want uid_map '0 100000 65536' and 'uid=0 file-owner=0'"
fi

pid=$(pid_of "$id")
rc=0
kill_stopped "$id" "$pid" || rc=$?
if [ "$rc" = 0 ] && "$husk" delete "$id" >"$out" 2>&1 && gone "$id" "$pid"; then
	ok "kill KILL and delete: the container stops, then nothing is left (state, cgroup, process)"
else
	not_ok "kill and delete" "kill: $rc (pid '$pid'); state, cgroup or process left"
fi

# ---- the systemd cgroup driver (husk --systemd-cgroup), as runc's --------
# (tests/vm/suites/systemd.bats proves the rest on amd64.)
sd="$husk --systemd-cgroup"
unit_state() { echo "$(systemctl show -P LoadState "$1") $(systemctl show -P ActiveState "$1")"; }
id=arm64-sd
unit=husk-arm64-$id.scope
scope=/sys/fs/cgroup/system.slice/$unit
rc=0
if [ "$(cat /proc/1/comm)" != systemd ]; then
	rc="PID 1 is $(cat /proc/1/comm), not systemd"
	: >"$out"
else
	$sd run -d --bundle "$(bundle sd)" "$id" >"$out" 2>&1 </dev/null || rc=$?
fi
pid=$(pid_of "$id")
if [ "$rc" = 0 ] && [ -n "$pid" ] && [ "$(cat "/proc/$pid/cgroup")" = "0::/system.slice/$unit" ] &&
	[ "$(unit_state "$unit")" = "loaded active" ] && [ "$(systemctl show -P Delegate "$unit")" = yes ] &&
	[ "$(systemctl show -P MemoryMax "$unit")" = 33554432 ] && [ "$(systemctl show -P TasksMax "$unit")" = 20 ] &&
	[ "$(cat "$scope/memory.max")" = 33554432 ] && [ "$(cat "$scope/pids.max")" = 20 ] &&
	[ "$(systemctl is-active dbus.service)" = active ]; then
	ok "systemd driver: the container is in the transient scope system.slice/$unit (Delegate=yes), made over the system bus; MemoryMax, TasksMax and the cgroup's memory.max, pids.max are the config's"
else
	not_ok "systemd driver: the container's scope" "run -d: $rc; pid '$pid' in $(cat "/proc/$pid/cgroup" 2>&1)" \
		"$unit: $(unit_state "$unit"), Delegate=$(systemctl show -P Delegate "$unit"), dbus.service: $(systemctl is-active dbus.service)," \
		"MemoryMax=$(systemctl show -P MemoryMax "$unit") TasksMax=$(systemctl show -P TasksMax "$unit")"
fi

rc=0
$sd exec "$id" cat /proc/self/cgroup >"$out" 2>&1 </dev/null || rc=$?
if [ "$rc" = 0 ] && [ "$(cat "$out")" = "0::/system.slice/$unit" ]; then
	ok "systemd driver: an exec'd process is in the container's scope"
else
	not_ok "systemd driver: exec" "exit $rc, want 0::/system.slice/$unit"
fi

rc=0
$sd update --memory 64m --pids-limit 30 "$id" >"$out" 2>&1 </dev/null || rc=$?
if [ "$rc" = 0 ] && [ "$(systemctl show -P MemoryMax "$unit")" = 67108864 ] && [ "$(systemctl show -P TasksMax "$unit")" = 30 ] &&
	[ "$(cat "$scope/memory.max")" = 67108864 ]; then
	ok "systemd driver: update sets the unit's MemoryMax and TasksMax, and memory.max follows"
else
	not_ok "systemd driver: update" "exit $rc; MemoryMax=$(systemctl show -P MemoryMax "$unit") TasksMax=$(systemctl show -P TasksMax "$unit"), want 67108864 and 30"
fi

rc=0
kill_stopped "$id" "$pid" || rc=$?
if [ "$rc" = 0 ] && $sd delete "$id" >"$out" 2>&1 && gone "$id" "$pid" &&
	[ "$(unit_state "$unit")" = "not-found inactive" ] && [ ! -e "$scope" ]; then
	ok "systemd driver: kill and delete leave no unit, no scope cgroup, no state, no process"
else
	not_ok "systemd driver: kill and delete" "kill: $rc; $unit: $(unit_state "$unit"); scope cgroup: $(ls -d "$scope" 2>&1)"
fi

id=arm64-sd-default
husk_run sd-default --systemd-cgroup
if [ "$rc" = 0 ] && [ "$(cat "$out")" = "0::/system.slice/husk-$id.scope" ] &&
	[ "$(unit_state "husk-$id.scope")" = "not-found inactive" ]; then
	ok "systemd driver: without a cgroupsPath the scope is system.slice/husk-<id>.scope (runc's default), gone after run"
else
	not_ok "systemd driver: the default scope" "exit $rc, want 0::/system.slice/husk-$id.scope; unit: $(unit_state "husk-$id.scope")"
fi

left=$(ls /run/husk 2>/dev/null; ls -d /sys/fs/cgroup/husk-arm64/*/ /sys/fs/cgroup/system.slice/husk-arm64-* 2>/dev/null
	systemctl list-units --all --plain --no-legend 'husk-arm64-*')
: >"$out"
if [ -z "$left" ]; then
	ok "nothing left behind by the runs: /run/husk and /sys/fs/cgroup/husk-arm64 are empty, no husk-arm64-* unit or scope"
else
	not_ok "leftovers" "$left"
fi
exit "$failed"
