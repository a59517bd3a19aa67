#!/usr/bin/env bash
# run.sh: the arm64 smoke lane. Boots Debian 12's arm64 kernel under
# qemu-system-aarch64 (TCG, -M virt -cpu max) into a debootstrap'd Debian 12
# arm64 root with systemd as PID 1 (build-image.sh, cached; the disk is a
# throwaway snapshot), with this run's files in the initramfs: the arm64
# release build of husk, guest.sh, smoke.sh and the bundles' configs.
# systemd runs guest.sh (units/husk-smoke.service), which prints smoke.sh's
# TAP on the serial console, then HUSK-ARM64-RESULT rc=N. Exit status: 0 when every check
# passed; 1 when one failed or the guest did not finish within
# VM_ARM64_TIMEOUT.
#
# Environment (the Makefile's vm-arm64 passes these):
#   VM_ARM64_HUSK     the arm64 husk (default: dist-arm64's release tarball's)
#   VM_SPEC_HUSK      a husk that runs here, for `husk spec` (default ./husk)
#   VM_ARM64_CACHE    where the kernel, initramfs and root image are kept
#                     (default /var/cache/husk-vm-arm64)
#   VM_ARM64_TIMEOUT  seconds the guest may take, boot included (default 600)
#   VM_MEM, VM_SMP    guest memory (MiB) and CPUs (default 1024, 2)
set -euo pipefail
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
VM_ARM64_HUSK="${VM_ARM64_HUSK:?VM_ARM64_HUSK: the arm64 husk to test (make vm-arm64 builds it)}"
VM_SPEC_HUSK="${VM_SPEC_HUSK:-$repo/husk}"
VM_ARM64_CACHE="${VM_ARM64_CACHE:-/var/cache/husk-vm-arm64}"
VM_ARM64_TIMEOUT="${VM_ARM64_TIMEOUT:-600}"
VM_MEM="${VM_MEM:-1024}"
VM_SMP="${VM_SMP:-2}"

say() { echo "vm-arm64: $*" >&2; }
die() { say "$*"; exit 2; }

command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 not installed (apt-get install qemu-system-arm)"
[ -x "$VM_SPEC_HUSK" ] || die "no husk at VM_SPEC_HUSK=$VM_SPEC_HUSK (make husk)"
[ -f "$VM_ARM64_HUSK" ] || die "no arm64 husk at VM_ARM64_HUSK=$VM_ARM64_HUSK"
for v in VM_ARM64_TIMEOUT VM_MEM VM_SMP; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v='${!v}' is not a positive number"
done
readelf -h "$VM_ARM64_HUSK" 2>/dev/null | grep -q 'Machine:.*AArch64' || die "$VM_ARM64_HUSK is not an AArch64 ELF"

t0=$SECONDS
image="$("$here/build-image.sh" "$VM_ARM64_CACHE" | tail -1)" && [ -e "$image/.complete" ] ||
	die "cannot build the arm64 guest image in $VM_ARM64_CACHE"

run_dir="$(mktemp -d /tmp/husk-vm-arm64.XXXXXX)"
qpid=
cleanup() {
	[ -z "$qpid" ] || kill -9 "$qpid" 2>/dev/null || true
	rm -rf "$run_dir"
}
trap cleanup EXIT

# ---- this run's files: husk, smoke.sh, the configs -------------------------
d="$run_dir/initrd.d/husk-vm"
mkdir -p "$d/configs"
cp "$VM_ARM64_HUSK" "$d/husk"
cp "$here/smoke.sh" "$here/guest.sh" "$d/"
chmod 0755 "$d/husk"
(cd "$run_dir" && "$VM_SPEC_HUSK" spec) || die "$VM_SPEC_HUSK spec failed"
# cfg NAME JQ-FILTER: configs/NAME.json, husk spec's default with FILTER applied.
cfg() {
	jq --arg id "arm64-$1" "(.process.terminal = false | .root.readonly = false |
		.hostname = \"husk-arm64-c\" | .linux.cgroupsPath = \"/husk-arm64/\" + \$id) | $2" \
		"$run_dir/config.json" >"$d/configs/$1.json"
}
# sh -c SCRIPT as the process.
sh_c() { jq -n --arg s "$1" '["sh", "-c", $s]'; }
cfg run ".process.args = $(sh_c 'mkdir /tmp/made && echo "arm64-run $(uname -m) mkdir=$?"; exit 7')"
cfg sleep '.process.args = ["sleep", "600"]'
# mkdirat is 34 on aarch64 (258 on x86_64): the filter names it, libseccomp
# resolves it for the architectures listed.
cfg seccomp ".process.args = $(sh_c 'mkdir /tmp/denied; m=$?; touch /tmp/allowed; t=$?; ls / >/dev/null; echo "mkdir=$m touch=$t ls=$?"; grep Seccomp: /proc/self/status') |
	.linux.seccomp = {defaultAction: \"SCMP_ACT_ALLOW\", architectures: [\"SCMP_ARCH_AARCH64\"],
		syscalls: [{names: [\"mkdirat\"], action: \"SCMP_ACT_ERRNO\", errnoRet: 1}]}"
# c 1:11 (/dev/kmsg) is not among the default devices; a write-only open
# needs no capability, so only the device program can refuse it.
kmsg='mknod /tmp/kmsg c 1 11 && if echo husk-arm64-device-check >/tmp/kmsg; then echo kmsg=written; else echo kmsg=denied; fi'
mknod_caps='.process.capabilities |= with_entries(.value += ["CAP_MKNOD"])'
cfg cgroup ".process.args = $(sh_c 'echo "memory.max=$(cat /sys/fs/cgroup/memory.max) pids.max=$(cat /sys/fs/cgroup/pids.max)"; '"$kmsg") |
	$mknod_caps | .linux.resources.memory.limit = 33554432 | .linux.resources.pids.limit = 32 |
	(if any(.linux.namespaces[]; .type == \"cgroup\") then . else .linux.namespaces += [{type: \"cgroup\"}] end)"
cfg device-allowed ".process.args = $(sh_c "$kmsg") | $mknod_caps |
	.linux.resources.devices += [{allow: true, type: \"c\", major: 1, minor: 11, access: \"w\"}]"
cfg userns ".process.args = $(sh_c 'cat /proc/self/uid_map; echo "uid=$(id -u) file-owner=$(stat -c %u /bin/busybox)"') |
	.linux.namespaces += [{type: \"user\"}] |
	.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}] |
	.linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]"
# The systemd driver: runc's slice:prefix:name, resources as the unit's
# properties; no cgroup namespace, so /proc/self/cgroup names the scope.
no_cgroupns='del(.linux.namespaces[] | select(.type == "cgroup"))'
cfg sd ".process.args = [\"sleep\", \"600\"] | .linux.cgroupsPath = \"system.slice:husk-arm64:arm64-sd\" |
	.linux.resources.memory.limit = 33554432 | .linux.resources.pids.limit = 20 | $no_cgroupns"
cfg sd-default ".process.args = [\"cat\", \"/proc/self/cgroup\"] | del(.linux.cgroupsPath) | $no_cgroupns"
(cd "$run_dir/initrd.d" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$run_dir/run.cpio.gz"
# The kernel unpacks concatenated archives in order.
cat "$image/initrd" "$run_dir/run.cpio.gz" >"$run_dir/initrd"

# ---- boot --------------------------------------------------------------------
con="$run_dir/console.log"
: >"$con"
say "booting $(cat "$image/packages") under qemu-system-aarch64 (TCG, -smp $VM_SMP)"
b0=$SECONDS
# pauth-impdef: QEMU's own pointer-authentication hash, much cheaper under
# TCG than the architected QARMA.
qemu-system-aarch64 -accel tcg,thread=multi -M virt -cpu max,pauth-impdef=on -smp "$VM_SMP" -m "$VM_MEM" \
	-nodefaults -no-user-config -display none -net none -no-reboot \
	-kernel "$image/Image" -initrd "$run_dir/initrd" \
	-drive "file=$image/root.img,if=virtio,format=raw,snapshot=on" \
	-append "console=ttyAMA0 panic=-1 quiet loglevel=3 cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1 systemd.unit=husk-smoke.target systemd.show_status=error" \
	-chardev "file,id=con,path=$con" -serial chardev:con \
	</dev/null >"$run_dir/qemu.out" 2>&1 &
qpid=$!
rc= why= booted=
shown=0
while :; do
	# Print the TAP lines as they come (the console also has the kernel's).
	total=$(wc -l <"$con")
	if [ "$total" -gt "$shown" ]; then
		sed -n "$((shown + 1)),${total}p" "$con" | tr -d '\r' | while IFS= read -r line; do
			case "$line" in
			HUSK-ARM64-BOOTED*) say "guest booted after $((SECONDS - b0))s: ${line#HUSK-ARM64-BOOTED }" ;;
			ok* | "not ok"* | "#"* | 1..*) printf '%s\n' "$line" ;;
			esac
		done
		shown=$total
	fi
	if line=$(tr -d '\r' <"$con" | grep -m1 '^HUSK-ARM64-RESULT rc='); then
		rc="${line#HUSK-ARM64-RESULT rc=}"
		rc="${rc%% *}"
	fi
	if ! kill -0 "$qpid" 2>/dev/null; then
		wait "$qpid" 2>/dev/null || true
		qpid=
		[ -n "$rc" ] || why="QEMU exited without a result: $(tail -3 "$run_dir/qemu.out" | tr '\n' ' ')"
		break
	fi
	if [ $((SECONDS - b0)) -ge "$VM_ARM64_TIMEOUT" ]; then
		why="the guest did not finish within ${VM_ARM64_TIMEOUT}s (VM_ARM64_TIMEOUT): killed"
		break
	fi
	sleep 1
done
say "guest done after $((SECONDS - b0))s; the lane took $((SECONDS - t0))s"
if [ "$rc" != 0 ] || [ -n "$why" ]; then
	echo "# vm-arm64 failed: ${why:-$rc smoke check(s) failed}"
	echo "# last lines of the guest console:"
	tail -40 "$con" | tr -d '\r' | sed 's/^/#   /'
	exit 1
fi
