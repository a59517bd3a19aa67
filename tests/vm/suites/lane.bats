#!/usr/bin/env bats
# The VM lane's own checks: the guest is the host it claims to be (pure
# cgroup v2; systemd as PID 1 in setup a, none in setup b), and the
# reference runtimes run a container there, so a husk failure in the other
# suites is husk's and not the lane's.

load ../../integration/helpers

setup_file() {
	[ -n "${HUSK_VM_SETUP:-}" ] || skip "not in a VM lane guest (HUSK_VM_SETUP unset)"
}

@test "lane: pure cgroup v2, every controller, no v1 hierarchy can be mounted" {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || fail "/sys/fs/cgroup is $(stat -f -c %T /sys/fs/cgroup)"
	local c
	for c in cpuset cpu io memory hugetlb pids; do
		grep -qw "$c" /sys/fs/cgroup/cgroup.controllers || fail "no $c in $(cat /sys/fs/cgroup/cgroup.controllers)"
	done
	mkdir -p "$TEST_DIR/v1"
	run mount -t cgroup -o memory none "$TEST_DIR/v1"
	[ "$status" -ne 0 ] || { umount "$TEST_DIR/v1"; fail "a v1 memory hierarchy was mounted"; }
	local v1
	v1="$(awk '$3 == "cgroup"' /proc/mounts)"
	[ -z "$v1" ] || fail "a v1 hierarchy is mounted: $v1"
}

@test "lane: setup a has systemd as PID 1 and a system bus; setup b has neither" {
	local comm
	comm="$(cat /proc/1/comm)"
	case "$HUSK_VM_SETUP" in
	a)
		[ "$comm" = systemd ] || fail "PID 1 is $comm"
		run timeout 30 busctl --system list --no-pager
		[ "$status" -eq 0 ] || fail "busctl: $output"
		assert_contains "$output" org.freedesktop.systemd1
		run systemctl is-system-running
		# "running", or "degraded" when some unit of the minimal image failed.
		[[ "$output" == running || "$output" == degraded || "$output" == starting ]] ||
			fail "systemctl is-system-running: $output"
		;;
	b)
		[ "$comm" != systemd ] || fail "PID 1 is systemd in setup b"
		[ ! -e /run/systemd/system ] || fail "/run/systemd/system exists in setup b"
		;;
	esac
}

# runc_like RUNTIME: the reference runtime runs a busybox container with a
# memory limit; its process is in a cgroup with that memory.max.
runc_like() {
	local rt="$1" id
	id="$(new_id)"
	# crun 1.8.1 knows runtime-spec versions up to 1.1.
	update_config '.ociVersion = "1.0.2" | .linux.resources.memory.limit = 33554432 | .linux.resources.pids.limit = 64'
	set_args sh -c 'cat /proc/self/cgroup; echo ok'
	run timeout 60 "$rt" --root "$TEST_DIR/$rt-root" run --bundle "$BUNDLE" "$id"
	"$rt" --root "$TEST_DIR/$rt-root" delete -f "$id" >/dev/null 2>&1 || true
	[ "$status" -eq 0 ] || fail "$rt run: $output"
	assert_contains "$output" "0::/" "ok"
}

@test "lane: Debian's runc runs a container with limits in the guest" {
	runc_like runc
}

@test "lane: crun runs a container with limits in the guest" {
	runc_like crun
}
