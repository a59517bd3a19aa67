#!/usr/bin/env bash
# Parity with Debian's runc and crun: the same bundle run by each runtime.
# Load after helpers.

# RUNC and CRUN: the runtimes husk is compared with (absent: not compared).
RUNC="${RUNC:-/usr/sbin/runc}"
CRUN="${CRUN:-/usr/bin/crun}"

# runtimes prints husk's binary, then each of runc and crun present here.
runtimes() {
	echo "$HUSK_BIN"
	local rt
	[ -x "$RUNC" ] && echo "$RUNC"
	[ -x "$CRUN" ] && crun_runs_here && echo "$CRUN"
	return 0
}

# crun_runs_here: crun refuses a hybrid host whose cgroup2 hierarchy has
# controllers ("cgroups in hybrid mode not supported"), as this
# one (hugetlb); runc and husk run there.
crun_runs_here() {
	local sub=/sys/fs/cgroup/unified/cgroup.controllers
	[ ! -e "$sub" ] || [ -z "$(tr -d ' \n' <"$sub")" ]
}

# older_spec: the bundle's ociVersion made one Debian's crun (1.8) knows;
# nothing else in husk's spec needs the newer one.
older_spec() {
	update_config '.ociVersion = "1.0.2"'
}

# rt BIN ARGS...: BIN with a --root of its own in this test's dir (husk:
# the test's HUSK_ROOT, which the teardown checks).
rt() {
	local bin="$1" root
	shift
	root="$TEST_DIR/root-$(basename "$bin")"
	[ "$bin" = "$HUSK_BIN" ] && root="$HUSK_ROOT"
	timeout -k 5 "$HUSK_TIMEOUT" "$bin" --root "$root" "$@"
}
