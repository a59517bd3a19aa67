#!/usr/bin/env bash
# build-image.sh CACHE_DIR: build (once) what the arm64 guest boots and print
# its directory. Everything comes from Debian 12's arm64 packages, fetched
# with apt-get download through a private apt state (arm64 only; the host's
# dpkg gets no foreign architecture) and unpacked with dpkg-deb -x:
#   Image    the kernel of linux-image-arm64 (an uncompressed arm64 Image;
#            cgroup v2, seccomp, BPF, user namespaces and the PL011 console
#            are built in, so no module is needed)
#   initrd   a gzip'd cpio of busybox-static (arm64) and ./init
# The directory is named after a hash of this recipe, init and the two
# packages' versions; older images but one are pruned.
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

key="$( {
	cat "$here/build-image.sh" "$here/init"
	echo "$kernel_pkg $kernel_ver busybox-static $busybox_ver $suite"
} | sha256sum | cut -c1-16)"
out="$cache/img-$key"
if [ -e "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

start=$SECONDS
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "building $out ($kernel_pkg $kernel_ver, busybox-static $busybox_ver)"
(cd "$work" && apt_ apt-get -q -o DPkg::Lock::Timeout=600 download "$kernel_pkg" busybox-static >&2)
dpkg-deb -x "$work"/linux-image-*.deb "$work/kernel"
dpkg-deb -x "$work"/busybox-static_*.deb "$work/busybox"
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
mkdir -p "$ird"/{bin,dev,proc,sys,run,tmp,newroot}
cp "$work/busybox/bin/busybox" "$ird/bin/busybox"
cp "$here/init" "$ird/init"
chmod 0755 "$ird/init" "$ird/bin/busybox"
(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$work/initrd"

mkdir -p "$out.new"
mv "$work/Image" "$work/initrd" "$out.new/"
echo "$kernel_pkg $kernel_ver busybox-static $busybox_ver" >"$out.new/packages"
rm -rf "$out"
mv "$out.new" "$out"
touch "$out/.complete"
log "built $out in $((SECONDS - start))s"
ls -dt "$cache"/img-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
echo "$out"
