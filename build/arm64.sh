#!/usr/bin/env bash
# Runs its arguments (a `go build`) in the environment that cross-builds
# husk for linux/arm64, linked statically against glibc (docs/building.md,
# "arm64"): Debian's cross gcc (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)
# and a libseccomp.a compiled with it from build/libseccomp.sh's source (the
# one build/musl.sh links: Debian 12's, checked against the .dsc's sha256),
# kept in a cache keyed by this recipe and libseccomp.sh.
#
#   build/arm64.sh go build -ldflags "-linkmode external -extldflags -static" .
set -euo pipefail

here=$(dirname "${BASH_SOURCE[0]}")
cache=${HUSK_BUILD_CACHE:-/var/cache/husk-build}
cross=aarch64-linux-gnu
# shellcheck source=build/libseccomp.sh
. "$here/libseccomp.sh"
recipe=$(cat "${BASH_SOURCE[0]}" "$here/libseccomp.sh" | sha256sum | cut -c1-12)
prefix=$cache/arm64-libseccomp-$version-$debian-$recipe

build() {
	command -v $cross-gcc >/dev/null || { echo "build/arm64.sh: $cross-gcc not found (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)" >&2; exit 1; }
	command -v gperf >/dev/null || { echo "build/arm64.sh: gperf not found (apt-get install gperf)" >&2; exit 1; }
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/.arm64-XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	libseccomp_source build/arm64.sh "$tmp" || exit 1
	(
		cd "$tmp/libseccomp-$version"
		# -ffile-prefix-map: no build directory in the archive.
		{
			CC=$cross-gcc CFLAGS="-O2 -ffile-prefix-map=$tmp=." \
				./configure --host=$cross --prefix="$prefix" --enable-static --disable-shared &&
				make -j"$(nproc)" && make install DESTDIR="$tmp/stage"
		} >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; echo "build/arm64.sh: libseccomp $version-$debian did not build with $cross-gcc" >&2; exit 1; }
	)
	mkdir -p "$tmp/out"
	cp -a "$tmp/stage$prefix/." "$tmp/out/"
	mv -T "$tmp/out" "$prefix" 2>/dev/null || true
	rm -rf "$tmp"
	trap - EXIT
}

[ -e "$prefix/lib/libseccomp.a" ] || build >&2
[ -e "$prefix/lib/libseccomp.a" ] || { echo "build/arm64.sh: no $prefix/lib/libseccomp.a" >&2; exit 1; }
export CC=$cross-gcc CGO_ENABLED=1 GOOS=linux GOARCH=arm64
export CGO_CFLAGS="-O2 -g"
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=
exec "$@"
