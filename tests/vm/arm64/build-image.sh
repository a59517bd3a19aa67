#!/usr/bin/env bash
# build-image.sh CACHE_DIR: build (once) what the arm64 guest boots and print
# its directory. Everything comes from Debian 12's arm64 packages; nothing
# arm64 runs on the host (it has no qemu-user or binfmt_misc):
#   Image    the kernel of linux-image-arm64 (an uncompressed arm64 Image;
#            cgroup v2, seccomp, BPF and user namespaces are built in),
#            fetched with apt-get download through a private apt state
#            (arm64 only; the host's dpkg gets no foreign architecture)
#   initrd   a gzip'd cpio of the root's busybox-static, ./init and the
#            kernel's modules for the root disk (virtio PCI and block, ext4)
#   root.img an ext4 image of a Debian 12 arm64 minbase with systemd and
#            dbus: debootstrap --foreign (its first stage: download and
#            unpack, on the host), the packages the first stage leaves
#            packed unpacked the same way, and what the maintainer scripts
#            of the second stage would make that a systemd boot needs
#            (below, "Configure"); the second stage itself (dpkg run in the
#            guest under TCG) took 18 minutes here.
# The directory is named after a hash of this recipe, init, units/ and the
# packages' versions; older images but one are pruned. The last root's
# .debs are kept in CACHE_DIR/debs for the next recipe.
set -euo pipefail
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

cache="${1:?usage: build-image.sh CACHE_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mirror="${VM_MIRROR:-http://deb.debian.org/debian}"
suite=bookworm

log() { echo "arm64-image: $*" >&2; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

# A private apt for arm64, none of the host's apt.conf.d (no DEP-11 and
# the like); its lists stay in the cache and are refreshed once a day (as
# the amd64 image takes the host's lists as they are).
apt_dir="$cache/apt"
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/apt.conf.d"
echo "deb $mirror $suite main" >"$apt_dir/sources.list"
cat >"$apt_dir/apt.conf" <<CONF
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
Dir::State "$apt_dir/state";
Dir::State::status "/dev/null";
Dir::Cache "$apt_dir/cache";
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::Etc::Parts "$apt_dir/apt.conf.d";
Acquire::Languages "none";
APT::Sandbox::User "root";
CONF
apt_() { APT_CONFIG="$apt_dir/apt.conf" "$@"; }
if [ ! -e "$apt_dir/updated" ] || [ -n "$(find "$apt_dir/updated" -mmin +1440)" ]; then
	apt_ apt-get -q -o DPkg::Lock::Timeout=600 update >"$apt_dir/update.log" 2>&1 ||
		{ tail -5 "$apt_dir/update.log" >&2; log "apt-get update (arm64 lists of $mirror) failed"; exit 1; }
	touch "$apt_dir/updated"
fi
kernel_pkg="$(apt_ apt-cache depends linux-image-arm64 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')"
[ -n "$kernel_pkg" ] || { log "the arm64 lists name no linux-image-arm64"; exit 1; }
version_of() { apt_ apt-cache show --no-all-versions "$1" | awk '/^Version:/ { print $2; exit }'; }
kernel_ver="$(version_of "$kernel_pkg")"
busybox_ver="$(version_of busybox-static)"
systemd_ver="$(version_of systemd)"
# The root: minbase, systemd as init, dbus (the systemd driver talks to
# systemd through the system bus), busybox-static (the containers' rootfs).
include=systemd,systemd-sysv,dbus,busybox-static
# The root disk's modules, in load order (each after what it depends on:
# the modules' depends= and softdep=).
modules="virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk crc16 mbcache crc32c_generic jbd2 ext4"

key="$( {
	cat "$here/build-image.sh" "$here/init" "$here"/units/*
	echo "$kernel_pkg $kernel_ver busybox-static $busybox_ver systemd $systemd_ver $suite"
} | sha256sum | cut -c1-16)"
out="$cache/img-$key"
if [ -e "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

start=$SECONDS
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "building $out ($kernel_pkg $kernel_ver, systemd $systemd_ver, busybox-static $busybox_ver)"

# ---- the root: debootstrap's first stage, then the rest unpacked ---------
root="$work/root"
mkdir -p "$cache/debs"
debootstrap --foreign --arch=arm64 --variant=minbase --include="$include" \
	--cache-dir="$cache/debs" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	{ tail -5 "$work/debootstrap.log" >&2; log "debootstrap --foreign (arm64) failed"; exit 1; }
log "debootstrap's first stage done at $((SECONDS - start))s"
# The first stage unpacks the Priority: required packages; the others of
# its list (debootstrap/base: systemd, dbus and their libraries) are
# unpacked here the way it unpacks (dpkg-deb's data), keeping the merged
# /usr's symlinks (/bin -> usr/bin ...).
for pkg in $(cat "$root/debootstrap/base"); do
	deb="$(awk -v p="$pkg" '$1 == p { print $2; exit }' "$root/debootstrap/debpaths")"
	[ -n "$deb" ] && [ -f "$root/$deb" ] || { log "debootstrap left no .deb for $pkg"; exit 1; }
	dpkg-deb --fsys-tarfile "$root/$deb" | tar --keep-directory-symlink -C "$root" -xf - ||
		{ log "unpacking $pkg failed"; exit 1; }
done

# ---- Configure: what the second stage's maintainer scripts would make ----
# (debootstrap links /proc to the host's in a container: a real directory.)
[ ! -L "$root/proc" ] || { rm "$root/proc" && mkdir -m 0555 "$root/proc"; }
# base-files: its postinst is a shell script made to run from outside
# (DPKG_ROOT): /var/run -> /run (where godbus finds the system bus),
# /var/lock -> /run/lock, /etc/profile and the like.
dpkg-deb -e "$root/$(awk '$1 == "base-files" { print $2; exit }' "$root/debootstrap/debpaths")" "$work/base-files"
DPKG_ROOT="$root" sh "$work/base-files/postinst" configure ||
	{ log "base-files' postinst (DPKG_ROOT=$root) failed"; exit 1; }
# base-passwd: the accounts from its masters. systemd's and dbus's own
# (sysusers.d) are made at boot by the root's systemd-sysusers.service.
cp "$root/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
cp "$root/usr/share/base-passwd/group.master" "$root/etc/group"
# systemd: a machine id (one per image, from its key: no first boot).
printf '%s\n' "$(echo "$key machine-id" | sha256sum | cut -c1-32)" >"$root/etc/machine-id"
echo husk-arm64 >"$root/etc/hostname"
# No fstab entry: the initramfs mounts the root, and there is no udev to
# announce a disk's device unit.
echo '# the initramfs mounts / (tests/vm/arm64/init)' >"$root/etc/fstab"
cp "$here"/units/* "$root/etc/systemd/system/"
# The download cache keeps this root's .debs only.
sed 's|.*/||' "$root/debootstrap/debpaths" | sort >"$work/debs.keep"
(cd "$cache/debs" && ls | grep '\.deb$' | sort | comm -23 - "$work/debs.keep" | xargs -r rm -f --)
rm -rf "$root/debootstrap" "$root/var/cache/apt/archives/"*.deb \
	"$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/locale" "$root/usr/share/info"
mkfs.ext4 -q -F -L husk-arm64 -d "$root" "$work/root.img" 1G >"$work/mkfs.log" 2>&1 ||
	{ cat "$work/mkfs.log" >&2; log "mkfs.ext4 -d (the root image) failed"; exit 1; }
log "root.img written at $((SECONDS - start))s"

# ---- the kernel and the initramfs -----------------------------------------
(cd "$work" && apt_ apt-get -q -o DPkg::Lock::Timeout=600 download "$kernel_pkg" >&2)
dpkg-deb -x "$work"/linux-image-*.deb "$work/kernel"
kimg="$work/kernel/boot/vmlinuz-${kernel_pkg#linux-image-}"
# Debian's arm64 vmlinuz is the raw Image; gunzip it should it be gzip'd.
if [ "$(head -c 2 "$kimg" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
	gzip -dc "$kimg" >"$work/Image"
else
	cp "$kimg" "$work/Image"
fi
# An arm64 Image has "ARM\x64" at offset 56.
[ "$(tail -c +57 "$work/Image" | head -c 4 | od -An -tx1 | tr -d ' ')" = 41524d64 ] ||
	{ log "$kimg is not an arm64 Image"; exit 1; }

ird="$work/initrd.d"
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,modules}
cp "$root/bin/busybox" "$ird/bin/busybox"
cp "$here/init" "$ird/init"
chmod 0755 "$ird/init" "$ird/bin/busybox"
for m in $modules; do
	ko="$(find "$work/kernel/lib/modules" -name "$m.ko" | head -1)"
	[ -n "$ko" ] || { log "$kernel_pkg has no module $m"; exit 1; }
	cp "$ko" "$ird/modules/"
	echo "$m" >>"$ird/modules/order"
done
(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$work/initrd"

mkdir -p "$out.new"
mv "$work/Image" "$work/initrd" "$work/root.img" "$out.new/"
echo "$kernel_pkg $kernel_ver systemd $systemd_ver busybox-static $busybox_ver" >"$out.new/packages"
rm -rf "$out"
mv "$out.new" "$out"
touch "$out/.complete"
log "built $out in $((SECONDS - start))s"
ls -dt "$cache"/img-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
echo "$out"
