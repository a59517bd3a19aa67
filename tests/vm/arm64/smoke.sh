#!/bin/sh
# smoke.sh: runs in the arm64 guest (busybox sh, PID 1's child) and prints
# TAP. husk is the arm64 release build at /husk-vm/husk; the bundles'
# configs were written on the host (run.sh) and share one busybox rootfs.
# Exit status: the number of failed checks.
export PATH=/bin:/sbin
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
skip() { n=$((n + 1)); echo "ok $n - $1 # skip $2"; }
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
# husk_run NAME [UID]: run config NAME in the foreground, output in $out, status in $rc.
husk_run() {
	rc=0
	"$husk" run --bundle "$(bundle "$1" "${2:-}")" "arm64-$1" >"$out" 2>&1 </dev/null || rc=$?
}
# gone ID PID: nothing of container ID is left (state, cgroup, its init PID).
gone() {
	! "$husk" list -q 2>/dev/null | grep -qx "$1" &&
		[ ! -e "/run/husk/$1" ] &&
		[ ! -e "/sys/fs/cgroup/husk-arm64/$1" ] &&
		[ ! -e "/proc/$2" ]
}

echo "1..11"
# The container rootfs: busybox-static (arm64) and its applets.
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/tmp" "$rootfs/etc"
cp /bin/busybox "$rootfs/bin/busybox"
chroot "$rootfs" /bin/busybox --install -s /bin
echo 'root:x:0:0:root:/:/bin/sh' >"$rootfs/etc/passwd"

: >"$out"
if [ "$(uname -m)" = aarch64 ] && grep -q '^cgroup2 /sys/fs/cgroup cgroup2 ' /proc/mounts && ! grep -q ' cgroup ' /proc/mounts &&
	"$husk" --version >"$out" 2>&1 && grep -q '^libseccomp: 2\.' "$out"; then
	ok "guest: aarch64 kernel $(uname -r), pure cgroup v2; husk --version: $(head -1 "$out")"
else
	not_ok "guest: aarch64, cgroup v2, husk --version" "uname -m: $(uname -m); cgroup mounts: $(grep cgroup /proc/mounts)"
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

pid=$("$husk" state "$id" 2>/dev/null | sed -n 's/^ *"pid": *\([0-9]*\),*$/\1/p')
rc=0
[ -n "$pid" ] || rc=no-pid
[ "$rc" != 0 ] || "$husk" kill "$id" KILL >"$out" 2>&1 || rc=$?
i=0
while [ "$rc" = 0 ] && [ "$i" -lt 300 ] && ! "$husk" state "$id" 2>/dev/null | grep -q '"status": *"stopped"'; do
	i=$((i + 1))
	sleep 0.1
done
"$husk" state "$id" >"$out" 2>&1 || true
if [ "$rc" = 0 ] && grep -q '"status": *"stopped"' "$out" && "$husk" delete "$id" >"$out" 2>&1 && gone "$id" "$pid"; then
	ok "kill KILL and delete: the container stops, then nothing is left (state, cgroup, process)"
else
	not_ok "kill and delete" "kill: $rc (pid '$pid'); state, cgroup or process left"
fi

left=$(ls /run/husk 2>/dev/null; ls -d /sys/fs/cgroup/husk-arm64/*/ 2>/dev/null)
: >"$out"
if [ -z "$left" ]; then
	ok "nothing left behind by the runs: /run/husk and /sys/fs/cgroup/husk-arm64 are empty"
else
	not_ok "leftovers" "$left"
fi

skip "the systemd cgroup driver" "this guest has no systemd (a busybox initramfs; see docs/testing.md)"
exit "$failed"
