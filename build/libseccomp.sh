# build/libseccomp.sh: sourced by build/musl.sh (amd64) and build/arm64.sh,
# so both architectures link one libseccomp: Debian 12's own (2.5.4-1+deb12u1:
# the release and Debian's patch, the syscall table of Linux 6.7), its two
# files checked against the sha256 of Debian's .dsc. Each script's cache key
# hashes this file too.
version=2.5.4
debian=1+deb12u1
pool=http://deb.debian.org/debian/pool/main/libs/libseccomp
orig=libseccomp_$version.orig.tar.gz
orig_sha=d82902400405cf0068574ef3dc1fe5f5926207543ba1ae6f8e7a1576351dcbdb
patches=libseccomp_$version-$debian.debian.tar.xz
patches_sha=665fc6ad1b9887207b0af1a293a2d7975e2df503a2618d1808b970081f9672f6

# libseccomp_source WHO DIR [HINT]: download and check the two files into
# DIR, unpack them and apply Debian's patches in DIR/libseccomp-$version.
# WHO names the caller in errors; HINT is added to a failed download's.
libseccomp_source() {
	local who=$1 dir=$2 hint=${3:+ ($3)} f p
	for f in "$orig:$orig_sha" "$patches:$patches_sha"; do
		curl -fsS --retry 3 -m 120 -o "$dir/${f%%:*}" "$pool/${f%%:*}" ||
			{ echo "$who: download $pool/${f%%:*} failed$hint" >&2; return 1; }
		echo "${f##*:}  $dir/${f%%:*}" | sha256sum -c --quiet - ||
			{ echo "$who: ${f%%:*}: sha256 is not Debian's ${f##*:}" >&2; return 1; }
	done
	tar -xzf "$dir/$orig" -C "$dir"
	tar -xJf "$dir/$patches" -C "$dir/libseccomp-$version"
	while read -r p; do
		[ -z "$p" ] || [ "${p#\#}" != "$p" ] || patch -s -d "$dir/libseccomp-$version" -p1 <"$dir/libseccomp-$version/debian/patches/$p" || return 1
	done <"$dir/libseccomp-$version/debian/patches/series"
}
