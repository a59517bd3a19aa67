#!/usr/bin/env bash
# Runs its arguments (a `go build`) in the environment that links husk
# statically against musl instead of glibc (docs/building.md, "Why musl"), building what that
# takes once and keeping it in a cache keyed by this recipe:
#   - libseccomp.a compiled with musl-gcc from build/libseccomp.sh's source
#     (Debian 12's own, checked against the sha256 of Debian's .dsc);
#   - the Linux UAPI headers (linux/, asm/, asm-generic/ of Debian's
#     linux-libc-dev), which musl's include path leaves out.
# Needs musl-tools, gperf, curl and make (the Makefile installs them).
#
#   build/musl.sh go build -ldflags "-linkmode external -extldflags -static" .
set -euo pipefail

here=$(dirname "${BASH_SOURCE[0]}")
cache=${HUSK_BUILD_CACHE:-/var/cache/husk-build}
# shellcheck source=build/libseccomp.sh
. "$here/libseccomp.sh"
recipe=$(cat "${BASH_SOURCE[0]}" "$here/libseccomp.sh" | sha256sum | cut -c1-12)
prefix=$cache/musl-libseccomp-$version-$debian-$recipe

build() {
	command -v musl-gcc >/dev/null || { echo "build/musl.sh: musl-gcc not found (apt-get install musl-tools)" >&2; exit 1; }
	command -v gperf >/dev/null || { echo "build/musl.sh: gperf not found (apt-get install gperf)" >&2; exit 1; }
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/.musl-XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# The UAPI headers musl-gcc's -nostdinc leaves out.
	local arch
	arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	mkdir -p "$tmp/out/kinclude"
	ln -s /usr/include/linux "$tmp/out/kinclude/linux"
	ln -s "/usr/include/$arch/asm" "$tmp/out/kinclude/asm"
	ln -s /usr/include/asm-generic "$tmp/out/kinclude/asm-generic"
	libseccomp_source build/musl.sh "$tmp" "make husk HUSK_LIBC=glibc builds against glibc instead" || exit 1
	(
		cd "$tmp/libseccomp-$version"
		{
			CC=musl-gcc CFLAGS="-O2 -isystem $tmp/out/kinclude" \
				./configure --prefix="$prefix" --enable-static --disable-shared &&
				make -j"$(nproc)" && make install DESTDIR="$tmp/stage"
		} >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; echo "build/musl.sh: libseccomp $version-$debian did not build with musl-gcc" >&2; exit 1; }
	)
	cp -a "$tmp/stage$prefix/." "$tmp/out/"
	# Another build may have finished first: the first rename wins.
	mv -T "$tmp/out" "$prefix" 2>/dev/null || true
	rm -rf "$tmp" # here, not only in the trap: the exec below skips EXIT traps
	trap - EXIT
}

[ -e "$prefix/lib/libseccomp.a" ] || build >&2
[ -e "$prefix/lib/libseccomp.a" ] || { echo "build/musl.sh: no $prefix/lib/libseccomp.a" >&2; exit 1; }
# pkg-config finds only this libseccomp, never glibc's.
export CC=musl-gcc CGO_ENABLED=1
# -ffile-prefix-map: the cache directory (named by this recipe's hash) stays
# out of husk's debug info, so editing the recipe leaves the release as it was.
export CGO_CFLAGS="-O2 -g -isystem $prefix/kinclude -ffile-prefix-map=$prefix=musl-libseccomp"
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
exec "$@"
