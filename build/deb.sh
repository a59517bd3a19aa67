#!/usr/bin/env bash
# make deb: a Debian package of the built husk and husk-cni with dpkg-deb:
# /usr/bin/husk, /usr/bin/husk-cni, and as docs their --help output, the
# README, the changelog and the security policy. No maintainer scripts and
# no conffiles, so `apt remove husk` leaves nothing behind.
#
#   build/deb.sh HUSK HUSK_CNI OUTDIR      (VERSION in the environment)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
husk=$1 cni=$2 out=$3
: "${VERSION:?build/deb.sh: VERSION is not set}"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH
arch=$(dpkg --print-architecture)
# Debian's versions have no '-' in the upstream part without a revision.
debversion=${VERSION//-/\~}-1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/husk
doc=$root/usr/share/doc/husk
install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$doc"
install -m 0755 "$husk" "$root/usr/bin/husk"
install -m 0755 "$cni" "$root/usr/bin/husk-cni"
"$husk" --help >"$doc/husk.txt"
"$husk" --version >>"$doc/husk.txt"
# husk-cni has no --help: husk runs it (husk cni, husk cni-hook); its
# answer to one names its operations.
{
	echo "husk-cni: husk's CNI helper, run by husk beside it (husk cni, husk cni-hook)."
	"$cni" --help 2>&1 || true
} >"$doc/husk-cni.txt"
install -m 0644 README.md SECURITY.md "$doc/"
gzip -n -9 -c CHANGELOG.md >"$doc/changelog.gz"
cat >"$doc/copyright" <<EOT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: husk
Source: https://github.com/husk-runtime/husk
Comment: husk is linked statically with libseccomp (LGPL-2.1) and, on
 amd64, musl (MIT); the Go modules it contains are listed in the release's
 SPDX SBOM.
EOT
chmod 0644 "$doc"/*
size=$(du -k -s "$root/usr" | cut -f1)
cat >"$root/DEBIAN/control" <<EOT
Package: husk
Version: $debversion
Architecture: $arch
Maintainer: husk maintainers <husk@users.noreply.github.com>
Installed-Size: $size
Section: admin
Priority: optional
Homepage: https://github.com/husk-runtime/husk
Description: OCI container runtime with runc's command line
 husk creates, starts, signals and deletes containers from OCI bundles, with
 runc's command line, output and error wording, so containerd, Kubernetes,
 podman and Docker drive it unchanged. Statically linked; husk-cni, its CNI
 helper, is installed beside it.
EOT
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) >"$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/husk_${debversion}_$arch.deb" >&2
echo "$out/husk_${debversion}_$arch.deb"
