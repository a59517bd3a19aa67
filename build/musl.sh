#!/usr/bin/env bash
# Runs its arguments (a `go build`) in the environment that links husk
# statically against musl instead of glibc (docs/building.md, "Why musl"), building what that
# takes once and keeping it in a cache keyed by this recipe:
#   - libseccomp.a compiled with musl-gcc: Debian 12's own libseccomp
#     (2.5.4-1+deb12u1: the release and Debian's patch, the syscall table
#     of Linux 6.7), checked against the sha256 of Debian's .dsc;
#   - the Linux UAPI headers (linux/, asm/, asm-generic/ of Debian's
#     linux-libc-dev), which musl's include path leaves out.
# Needs musl-tools, gperf, curl and make (the Makefile installs them).
#
#   build/musl.sh go build -ldflags "-linkmode external -extldflags -static" .
set -euo pipefail

cache=${HUSK_BUILD_CACHE:-/var/cache/husk-build}
version=2.5.4
debian=1+deb12u1
pool=http://deb.debian.org/debian/pool/main/libs/libseccomp
orig=libseccomp_$version.orig.tar.gz
orig_sha=d82902400405cf0068574ef3dc1fe5f5926207543ba1ae6f8e7a1576351dcbdb
patches=libseccomp_$version-$debian.debian.tar.xz
patches_sha=665fc6ad1b9887207b0af1a293a2d7975e2df503a2618d1808b970081f9672f6

recipe=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
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
	for f in "$orig:$orig_sha" "$patches:$patches_sha"; do
		curl -fsS --retry 3 -m 120 -o "$tmp/${f%%:*}" "$pool/${f%%:*}" ||
			{ echo "build/musl.sh: download $pool/${f%%:*} failed (make husk HUSK_LIBC=glibc builds against glibc instead)" >&2; exit 1; }
		echo "${f##*:}  $tmp/${f%%:*}" | sha256sum -c --quiet - ||
			{ echo "build/musl.sh: ${f%%:*}: sha256 is not Debian's ${f##*:}" >&2; exit 1; }
	done
	tar -xzf "$tmp/$orig" -C "$tmp"
	tar -xJf "$tmp/$patches" -C "$tmp/libseccomp-$version"
	(
		cd "$tmp/libseccomp-$version"
		while read -r p; do
			[ -z "$p" ] || [ "${p#\#}" != "$p" ] || patch -s -p1 <"debian/patches/$p"
		done <debian/patches/series
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
export CGO_CFLAGS="-O2 -g -isystem $prefix/kinclude"
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
exec "$@"
