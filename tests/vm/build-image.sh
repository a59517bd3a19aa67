#!/usr/bin/env bash
# build-image.sh CACHE_DIR: build (once) the guest image of the VM test lane
# and print its directory. Everything comes from Debian packages:
#   vmlinux        Debian 12's cloud kernel (apt-get download + dpkg-deb -x,
#                  never installed on the host), its LZ4 payload unpacked to
#                  an ELF so QEMU boots it through PVH
#   initrd         a busybox initramfs that loads the virtio modules, mounts
#                  the root disk and the per-run data disk, and switches root
#   root.img       an ext4 image of a debootstrap minbase with the packages
#                  the suites need and the kernel's modules (depmod -b)
# The directory is named after a hash of this recipe (this script, the files
# it copies in, the package list and the kernel package's version), so a
# changed recipe builds a new image; older images are pruned.
set -euo pipefail
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

cache="${1:?usage: build-image.sh CACHE_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mirror="${VM_MIRROR:-http://deb.debian.org/debian}"
suite=bookworm

# What the suites need inside the guest.
packages=(
	systemd-sysv dbus kmod udev
	bats busybox-static jq iproute2 util-linux procps psmisc e2fsprogs
	runc crun containerd podman conmon containernetworking-plugins
	libseccomp2 iptables uidmap criu
)
# The LSM setups (c: AppArmor, d: SELinux) share this image: the AppArmor
# tools, Debian's reference policy and what builds the lane's own module.
lsm_packages=(
	apparmor selinux-policy-default policycoreutils selinux-utils checkpolicy semodule-utils
)
# Loaded by the initramfs, in dependency order (the cloud kernel has ext4
# built in but virtio as modules).
initrd_modules=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk)

log() { echo "build-image: $*" >&2; }

# The kernel package the cloud-amd64 metapackage points at, and its version.
kernel_pkg="$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')"
[ -n "$kernel_pkg" ] || { log "apt-cache knows no linux-image-cloud-amd64 (apt-get update?)"; exit 1; }
kernel_ver="$(apt-cache show --no-all-versions "$kernel_pkg" | awk '/^Version:/ { print $2; exit }')"

key="$( {
	cat "$here/build-image.sh" "$here/initrd-init" "$here/guest/husk-vm.service" "$here/selinux/husk_container.te"
	echo "${packages[*]} ${lsm_packages[*]} ${initrd_modules[*]} $kernel_pkg $kernel_ver $suite"
} | sha256sum | cut -c1-16)"
out="$cache/img-$key"

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -e "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

start=$SECONDS
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'umount "$work/root/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
log "building $out (kernel $kernel_pkg $kernel_ver) in $work"

# ---- kernel --------------------------------------------------------------
(cd "$work" && apt-get -o DPkg::Lock::Timeout=600 download -q "$kernel_pkg" >&2)
dpkg-deb -x "$work"/linux-image-*.deb "$work/kernel"
kver="${kernel_pkg#linux-image-}"
vmlinuz="$work/kernel/boot/vmlinuz-$kver"
# The bzImage payload is LZ4 (legacy frame, magic 02 21 4c 18): unpack it
# to the ELF vmlinux. lz4 may complain about the trailer after the frame.
off="$(grep -obUaP '\x02\x21\x4c\x18' "$vmlinuz" | head -1 | cut -d: -f1)"
[ -n "$off" ] || { log "no LZ4 payload in $vmlinuz"; exit 1; }
tail -c +"$((off + 1))" "$vmlinuz" | lz4 -dc >"$work/vmlinux" 2>/dev/null || true
[ "$(head -c 4 "$work/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] ||
	{ log "unpacked kernel is not an ELF"; exit 1; }

# ---- root filesystem -----------------------------------------------------
root="$work/root"
log "debootstrap $suite (${#packages[@]} extra packages) from $mirror"
# A second try only for the network's sake (a mirror hiccup).
for try in 1 2; do
	rm -rf "$root"
	debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]} ${lsm_packages[*]}" | tr ' ' ,)" \
		"$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 && break
	tail -30 "$work/debootstrap.log" >&2
	tail -30 "$root/debootstrap/debootstrap.log" 2>/dev/null >&2
	[ "$try" = 1 ] || exit 1
	log "debootstrap failed; trying once more"
done
mkdir -p "$root/lib/modules"
cp -a "$work/kernel/lib/modules/$kver" "$root/lib/modules/"
# The .deb ships no modules.dep; the guest's own depmod writes it (the
# host may have no kmod).
chroot "$root" depmod "$kver"
echo husk-vm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 husk-vm\n' >"$root/etc/hosts"
: >"$root/etc/fstab"
mkdir -p "$root/husk-vm"
# Setup (a): systemd starts the lane's runner from the data disk.
cp "$here/guest/husk-vm.service" "$root/etc/systemd/system/"
ln -sf /etc/systemd/system/husk-vm.service "$root/etc/systemd/system/multi-user.target.wants/husk-vm.service"
# Nothing else competes for the two emulated CPUs: no system containerd or
# podman services, no timers, no gettys.
for u in containerd.service podman.service podman.socket podman-restart.service podman-auto-update.timer \
	podman-auto-update.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
	fstrim.timer systemd-tmpfiles-clean.timer getty@.service serial-getty@.service \
	systemd-timesyncd.service man-db.timer dpkg-db-backup.timer; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
chroot "$root" apt-get -o DPkg::Lock::Timeout=600 clean

# ---- LSM setups ----------------------------------------------------------
# AppArmor: no profiles loaded at boot, and apparmor_parser out of the way
# in setups a and b, whose podman would otherwise load (and compile, slow
# under TCG) its default profile for every container; setup c puts it back
# (guest/init-lsm).
ln -sf /dev/null "$root/etc/systemd/system/apparmor.service"
mkdir -p "$root/usr/lib/husk-vm"
mv "$root/sbin/apparmor_parser" "$root/usr/lib/husk-vm/apparmor_parser"
# SELinux: the lane's module with the container types, then every file
# labelled from the policy's file_contexts (mkfs.ext4 -d keeps the xattrs).
cp "$here/selinux/husk_container.te" "$root/tmp/"
chroot "$root" sh -ec 'cd /tmp && checkmodule -M -m -o husk_container.mod husk_container.te &&
	semodule_package -o husk_container.pp -m husk_container.mod && semodule -i husk_container.pp &&
	rm -f husk_container.*' >&2
# setfiles sets each label through /proc/self/fd; -e keeps it off /proc.
mount -t proc proc "$root/proc"
chroot "$root" setfiles -e /proc /etc/selinux/default/contexts/files/file_contexts / >&2 || {
	umount "$root/proc"
	log "setfiles failed"
	exit 1
}
umount "$root/proc"

# ---- initramfs -----------------------------------------------------------
ird="$work/initrd.d"
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,lib/modules}
cp /bin/busybox "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"
cp "$here/initrd-init" "$ird/init"
chmod 0755 "$ird/init"
for m in "${initrd_modules[@]}"; do
	f="$(find "$root/lib/modules/$kver" -name "$m.ko" | head -1)"
	[ -n "$f" ] || { log "module $m.ko not in $kernel_pkg"; exit 1; }
	cp "$f" "$ird/lib/modules/"
	echo "$(basename "$f")" >>"$ird/lib/modules/order"
done
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd"

rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root/debootstrap"
size_mb=$(($(du -sm "$root" | cut -f1) + 1536))
mkfs.ext4 -q -F -L husk-root -E lazy_itable_init=0 -d "$root" "$work/root.img" "${size_mb}M" >/dev/null
rm -rf "$root"

mkdir -p "$out.new"
mv "$work/vmlinux" "$work/initrd" "$work/root.img" "$out.new/"
echo "$kernel_pkg $kernel_ver" >"$out.new/kernel"
rm -rf "$out"
mv "$out.new" "$out"
touch "$out/.complete"
log "built $out in $((SECONDS - start))s"
# Keep this image and the one before it (another branch may use it).
ls -dt "$cache"/img-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
echo "$out"
