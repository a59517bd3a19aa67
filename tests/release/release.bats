#!/usr/bin/env bats
# make release: two builds of one commit, in two directories of different

# docs/install.md promises. Each build is a fresh clone of HEAD (a clean tree).

bats_require_minimum_version 1.5.0

setup_file() {
	REL_ROOT=$(git -C "$BATS_TEST_DIRNAME" rev-parse --show-toplevel)
	export REL_ROOT
	export REL_TMP="$BATS_FILE_TMPDIR"
	local d
	for d in a/one b/second-directory; do
		git clone -q --no-hardlinks "$REL_ROOT" "$REL_TMP/$d" || return 1
		git -C "$REL_TMP/$d" checkout -q "$(git -C "$REL_ROOT" rev-parse HEAD)" || return 1
		make -C "$REL_TMP/$d" release >"$REL_TMP/${d%%/*}.log" 2>&1 ||
			{ tail -30 "$REL_TMP/${d%%/*}.log" >&3; return 1; }
	done
	export DIST_A="$REL_TMP/a/one/dist" DIST_B="$REL_TMP/b/second-directory/dist"
	VERSION=$(cat "$REL_ROOT/VERSION")
	export VERSION
}

fail() {
	echo "$@" >&2
	return 1
}

@test "release: two builds in two directories are byte-identical" {
	run -0 diff -r "$DIST_A" "$DIST_B"
	run -0 ls "$DIST_A"
	[ "${#lines[@]}" -eq 5 ] || fail "want 2 tarballs, 2 SBOMs, SHA256SUMS: $output"
}

@test "release: SHA256SUMS checks every artifact" {
	cd "$DIST_A"
	run -0 sha256sum --check --strict SHA256SUMS
	run -0 wc -l <SHA256SUMS
	[ "$output" -eq 4 ] || fail "SHA256SUMS has $output lines"
}

@test "release: each tarball holds static husk and husk-cni for its architecture, entries owned by 0 at the commit's time" {
	local arch machine epoch
	epoch=$(git -C "$REL_ROOT" log -1 --format=%ct)
	for arch in amd64 arm64; do
		case $arch in amd64) machine="X86-64" ;; arm64) machine="AArch64" ;; esac
		local t="$DIST_A/husk-$VERSION-linux-$arch.tar.gz" x="$BATS_TEST_TMPDIR/$arch"
		mkdir -p "$x" && tar -xzf "$t" -C "$x"
		run -0 tar --numeric-owner -tvzf "$t"
		! grep -v ' 0/0 ' <<<"$output" || fail "$arch: an entry not owned by 0/0"
		for b in husk husk-cni; do
			local f="$x/husk-$VERSION-linux-$arch/$b"
			[ -x "$f" ] || fail "$arch: no executable $b"
			run -0 readelf -h -l "$f"
			[[ "$output" == *"Machine:"*"$machine"* ]] || fail "$arch/$b is not $machine"
			[[ "$output" != *"INTERP"* ]] || fail "$arch/$b has a dynamic loader"
			[ "$(stat -c %Y "$f")" -eq "$epoch" ] || fail "$arch/$b mtime $(stat -c %Y "$f"), commit time $epoch"
			# No path of the build directory in the binary (-trimpath, cgo's too).
			! grep -a -q "$REL_TMP" "$f" || fail "$arch/$b holds the build directory $REL_TMP"
		done
	done
}

@test "release: the amd64 husk runs and prints the version, the commit and libseccomp" {
	local x="$BATS_TEST_TMPDIR/amd64"
	mkdir -p "$x" && tar -xzf "$DIST_A/husk-$VERSION-linux-amd64.tar.gz" -C "$x"
	run -0 "$x/husk-$VERSION-linux-amd64/husk" --version
	[ "${lines[0]}" = "husk version $VERSION" ] || fail "${lines[0]}"
	[ "${lines[1]}" = "commit: $(git -C "$REL_ROOT" rev-parse --short HEAD)" ] || fail "${lines[1]}"
	[[ "${lines[4]}" == "libseccomp: 2."* ]] || fail "${lines[4]}"
}

@test "release: each SBOM is SPDX 2.3 with the Go modules of the build info and the C libraries" {
	local arch clib
	for arch in amd64 arm64; do
		case $arch in amd64) clib=musl ;; arm64) clib=glibc ;; esac
		local s="$DIST_A/husk-$VERSION-linux-$arch.spdx.json"
		run -0 jq -r '.spdxVersion' "$s"
		[ "$output" = SPDX-2.3 ] || fail "$arch: spdxVersion $output"
		run -0 jq -r '.packages[] | "\(.name) \(.versionInfo)"' "$s"
		local pkgs="$output"
		grep -qx "husk $VERSION" <<<"$pkgs" || fail "$arch: no husk $VERSION package"
		grep -qx "husk-cni $VERSION" <<<"$pkgs" || fail "$arch: no husk-cni package"
		grep -q "^$clib [0-9]" <<<"$pkgs" || fail "$arch: no $clib with a version"
		grep -q "^libseccomp 2\." <<<"$pkgs" || fail "$arch: no libseccomp with a version"
		# Every module go version -m lists is a package of the SBOM.
		local x="$BATS_TEST_TMPDIR/sbom-$arch"
		mkdir -p "$x" && tar -xzf "$DIST_A/husk-$VERSION-linux-$arch.tar.gz" -C "$x"
		run -0 go version -m "$x/husk-$VERSION-linux-$arch/husk"
		local mods
		mods=$(awk '$1 == "dep" {print $2 " " $3}' <<<"$output")
		[ -n "$mods" ] || fail "$arch: go version -m lists no module"
		while read -r m; do
			grep -qxF "$m" <<<"$pkgs" || fail "$arch: module $m missing from the SBOM"
		done <<<"$mods"
		# Every relationship names a package of the document.
		run -0 jq -e '[.packages[].SPDXID] as $ids | all(.relationships[]; (.relatedSpdxElement | IN($ids[])))' "$s"
	done
}
