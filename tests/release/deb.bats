#!/usr/bin/env bats
# make deb: the package installs with apt, its /usr/bin/husk runs a
# container, and apt remove leaves nothing of it.

bats_require_minimum_version 1.5.0

setup_file() {
	REL_ROOT=$(git -C "$BATS_TEST_DIRNAME" rev-parse --show-toplevel)
	export REL_ROOT
	if dpkg-query -W -f '${Status}' husk 2>/dev/null | grep -q installed || [ -e /usr/bin/husk ] || [ -e /usr/bin/husk-cni ]; then
		export DEB_SKIP="husk is already installed on this host (package or /usr/bin/husk): not touching it"
		return 0
	fi
	export DEB_OUT="$BATS_FILE_TMPDIR/dist"
	make -C "$REL_ROOT" deb DIST="$DEB_OUT" >"$BATS_FILE_TMPDIR/make.log" 2>&1 ||
		{ tail -30 "$BATS_FILE_TMPDIR/make.log" >&3; return 1; }
}

teardown_file() {
	# A failed test must not leave the package on the host.
	[ -n "${DEB_SKIP:-}" ] || apt-get -o DPkg::Lock::Timeout=600 purge -y -q husk >/dev/null 2>&1 || true
}

fail() {
	echo "$@" >&2
	return 1
}

apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -q "$@"
}

@test "deb: apt install, husk --version and a container from /usr/bin/husk, apt remove leaves nothing" {
	[ -z "${DEB_SKIP:-}" ] || skip "$DEB_SKIP"
	local deb
	deb=$(echo "$DEB_OUT"/husk_*.deb)
	[ -f "$deb" ] || fail "no .deb in $DEB_OUT"
	run -0 dpkg-deb -c "$deb"
	local files="$output"

	run -0 apt_get install "$deb"
	run -0 /usr/bin/husk --version
	[ "${lines[0]}" = "husk version $(cat "$REL_ROOT/VERSION")" ] || fail "${lines[0]}"
	[ -s /usr/share/doc/husk/husk.txt ] || fail "no --help as docs"

	# A container, by the installed binary.
	local b="$BATS_TEST_TMPDIR/bundle" root="$BATS_TEST_TMPDIR/state" id="husk-deb-$$"
	mkdir -p "$b/rootfs/bin" && cp /bin/busybox "$b/rootfs/bin/busybox"
	(cd "$b" && /usr/bin/husk spec)
	jq '.process.terminal = false | .process.args = ["/bin/busybox", "echo", "hello from the deb"]' \
		"$b/config.json" >"$b/c.json" && mv "$b/c.json" "$b/config.json"
	run -0 /usr/bin/husk --root "$root" run --bundle "$b" "$id" </dev/null
	[[ "$output" == *"hello from the deb"* ]] || fail "container said: $output"
	run -0 /usr/bin/husk --root "$root" list -q
	[ -z "$output" ] || fail "left a container: $output"

	run -0 apt_get remove husk
	run dpkg-query -W -f '${db:Status-Abbrev}' husk
	[[ "$status" -ne 0 || "$output" == un* ]] || fail "dpkg still knows husk: $output"
	# Every regular file the package shipped is gone.
	local f
	while read -r f; do
		[ ! -e "/${f#./}" ] || fail "/${f#./} left after apt remove"
	done < <(awk '$1 !~ /^d/ {print $NF}' <<<"$files")
	[ ! -e /usr/share/doc/husk ] || fail "/usr/share/doc/husk left after apt remove"
}
