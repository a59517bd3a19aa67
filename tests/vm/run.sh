#!/usr/bin/env bash
# run.sh: the VM test lane. Boots the cached guest image (build-image.sh)
# under QEMU TCG once per setup, runs bats suites inside, and prints their
# TAP here. Exit status: 0 when every setup passed.
#
# Environment (the Makefile's vm-test passes these):
#   VM_HUSK      husk binary to test (absolute path)
#   VM_SUITES    bats files to run, absolute paths, space separated; PATH:a
#                (or :b, :cd, ...) runs that file in those setups only
#   VM_SETUPS    "a b": a = pure cgroup v2 + systemd as PID 1,
#                       b = pure cgroup v2, no systemd (the lane's own init)
#                       c = as b, AppArmor on with its tools
#                       d = as b, SELinux on (security=selinux, Debian's
#                           reference policy, permissive)
#   VM_CACHE     where the guest image is built and kept
#   VM_MODE      test (default); bench (runs the benchmark with VM_BENCH_ARGS);
#                script (runs the host file VM_SCRIPT with bash in the guest,
#                its output as TAP comments: a way to look around in a guest)
#   VM_FILTER    only the tests whose names match this regex (bats -f)
#   VM_ENV       NAME=VALUE words exported to the suites in the guest
#   VM_TIMEOUT   seconds one setup may take, boot included (default 1800)
#   VM_BOOT_TIMEOUT  seconds until the guest's runner must have started;
#                a guest that never gets there is retried once (default 240)
#   VM_MEM, VM_SMP, VM_CPU  guest memory (MiB), CPUs and QEMU -cpu model
#                (default 2048, 2, max)
set -euo pipefail
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
VM_HUSK="${VM_HUSK:-$repo/husk}"
VM_SUITES="${VM_SUITES:-$(ls "$here"/suites/*.bats 2>/dev/null | tr '\n' ' ')}"
VM_SETUPS="${VM_SETUPS:-a b}"
VM_CACHE="${VM_CACHE:-/var/cache/husk-vm}"
VM_MODE="${VM_MODE:-test}"
VM_TIMEOUT="${VM_TIMEOUT:-1800}"
VM_BOOT_TIMEOUT="${VM_BOOT_TIMEOUT:-240}"
VM_MEM="${VM_MEM:-2048}"
VM_SMP="${VM_SMP:-2}"
VM_CPU="${VM_CPU:-max}"
VM_SCRIPT="${VM_SCRIPT:-}"
VM_FILTER="${VM_FILTER:-}"
VM_ENV="${VM_ENV:-}"
VM_BENCH_ARGS="${VM_BENCH_ARGS:--n 20}"
GO="${GO:-go}"

say() { echo "vm: $*" >&2; }
die() { say "$*"; exit 2; }

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
[ -x "$VM_HUSK" ] || die "no husk binary at VM_HUSK=$VM_HUSK (make husk)"
case "$VM_MODE" in
test) [ -n "${VM_SUITES// /}" ] || die "no suites (VM_SUITES is empty)" ;;
bench) ;;
script) [ -f "$VM_SCRIPT" ] || die "VM_MODE=script needs VM_SCRIPT, a file (got '$VM_SCRIPT')" ;;
*) die "unknown VM_MODE '$VM_MODE' (test, bench or script)" ;;
esac
for s in $VM_SETUPS; do
	case "$s" in a | b | c | d) ;; *) die "unknown setup '$s' in VM_SETUPS (want a, b, c and/or d)" ;; esac
done

t0=$SECONDS
image="$("$here/build-image.sh" "$VM_CACHE" | tail -1)" && [ -e "$image/.complete" ] || die "cannot build the guest image in $VM_CACHE"
say "guest image $image ($(cat "$image/kernel")), ready after $((SECONDS - t0))s"

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/husk-vm.XXXXXX")"
cleanup() {
	local p
	for p in $(cat "$run_dir"/qemu.pid 2>/dev/null); do
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the per-run data disk: husk, tools, suites, the guest's scripts -------
data="$run_dir/data"
mkdir -p "$data/bin" "$data/src" "$data/guest"
cp "$VM_HUSK" "$data/husk"
cp "$here"/guest/run "$here"/guest/init-b "$here"/guest/init-lsm "$data/guest/"
# Go tools the suites would `go build` (the guest has no Go).
(
	cd "$repo"
	export CGO_ENABLED=1
	for t in tests/cmd/*/; do
		$GO build -o "$data/bin/$(basename "$t")" "./$t"
	done
	$GO build -o "$data/bin/husk-bench" ./bench
	# Run inside containers (busybox rootfs): static.
	CGO_ENABLED=0 $GO build -o "$data/bin/keylabel" ./tests/vm/cmd/keylabel
	cd tests/clients/criclient && $GO build -o "$data/bin/criclient" .
) >&2 || die "cannot build the test tools (go build)"
# The kubelet suites run kubelet on containerd 2.x: both come from
# tests/clients/build.sh (cached; it waits for the build make test's
# clients-prebuild started), only when a kubelet suite is in the lane.
# kubelet.bats needs them; without them lsm-kubelet.bats (the LSM guests)
# skips, printing why (kubelet.missing).
if [[ " $VM_SUITES " == *"/kubelet.bats"* || " $VM_SUITES " == *"/lsm-kubelet.bats"* ]]; then
	if k="$(GO="$GO" "$repo/tests/clients/build.sh" kubelet containerd2 2> >(tee "$run_dir/clients-build.log" >&2))"; then
		cp "$(sed -n 1p <<<"$k")/kubelet" "$data/bin/"
		cp -r "$(sed -n 2p <<<"$k")" "$data/bin/containerd2"
	elif [[ " $VM_SUITES " == *"/kubelet.bats"* ]]; then
		die "cannot build kubelet or containerd 2.x (tests/clients/build.sh)"
	else
		{
			echo "tests/clients/build.sh kubelet containerd2 failed on the host:"
			tail -3 "$run_dir/clients-build.log"
		} | tr '\n' ' ' >"$data/bin/kubelet.missing"
		say "$(cat "$data/bin/kubelet.missing")"
	fi
fi

# The Docker suite of the AppArmor guest runs the host's docker.io (Debian
# 12's, as the guest is: the libraries it links are in the image), copied
# in only when a docker suite is in the lane and the host has it (the suite
# skips, saying so, when not).
if [[ " $VM_SUITES " == *docker*.bats* ]] && [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ]; then
	mkdir -p "$data/bin/docker"
	cp /usr/sbin/dockerd /usr/bin/docker "$data/bin/docker/"
	for f in /usr/bin/docker-init /usr/sbin/docker-proxy; do
		[ ! -x "$f" ] || cp "$f" "$data/bin/docker/"
	done
fi

# Each suite runs from a copy of its repository's tests/ tree, at the same
# relative path, so `load ../integration/helpers` works for suites of any
# worktree. An entry PATH:a (or :b, :cd, ...) runs in those setups only.
declare -A src_of=()
n=0
for setup in a b c d; do : >"$data/suites-$setup"; done
[ "$VM_MODE" = test ] || VM_SUITES=
for entry in $VM_SUITES; do
	s="$entry" only="abcd"
	if [[ "$entry" =~ ^(.*):([abcd]+)$ ]]; then
		s="${BASH_REMATCH[1]}" only="${BASH_REMATCH[2]}"
	fi
	[ -f "$s" ] || die "no suite file $s"
	s="$(cd "$(dirname "$s")" && pwd)/$(basename "$s")"
	top="$(dirname "$s")"
	while [ "$top" != / ] && [ "$(basename "$top")" != tests ]; do top="$(dirname "$top")"; done
	[ "$top" != / ] || top="$(dirname "$s")"
	if [ -z "${src_of[$top]:-}" ]; then
		src_of[$top]="src/$n/$(basename "$top")"
		mkdir -p "$data/src/$n"
		cp -a "$top" "$data/${src_of[$top]}"
		n=$((n + 1))
	fi
	for setup in a b c d; do
		[[ "$only" != *"$setup"* ]] || echo "/husk-vm/${src_of[$top]}${s#"$top"}" >>"$data/suites-$setup"
	done
done
echo "$VM_MODE" >"$data/mode"
printf '%s' "$VM_FILTER" >"$data/filter"
for kv in $VM_ENV; do
	[[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "VM_ENV: '$kv' is not NAME=VALUE"
	printf '%s\n' "$kv"
done >"$data/env"
[ -z "$VM_SCRIPT" ] || cp "$VM_SCRIPT" "$data/script"
echo "$VM_BENCH_ARGS" >"$data/bench-args"
size=$(($(du -sm "$data" | cut -f1) + 64))
mkfs.ext4 -q -F -L husk-data -d "$data" "$run_dir/data.img" "${size}M" >/dev/null

# ---- one setup ---------------------------------------------------------------
# boot SETUP ATTEMPT: boot the guest and stream its TAP (the virtio serial
# port husk.tap, a file here) to stdout. Sets rc (the guest's bats status), booted, why (why no result).
boot() {
	local setup="$1" attempt="$2" cmdline qpid line elapsed start=$SECONDS
	local con="$run_dir/console-$setup-$attempt.log" tap="$run_dir/tap-$setup-$attempt.log"
	: >"$con"
	: >"$tap"
	cmdline="console=ttyS0 panic=-1 cgroup_no_v1=all husk.setup=$setup"
	case "$setup" in
	a) cmdline="$cmdline systemd.unified_cgroup_hierarchy=1" ;;
	d) cmdline="$cmdline security=selinux selinux=1 enforcing=0" ;;
	esac
	qemu-system-x86_64 -accel tcg,thread=multi -cpu "$VM_CPU" -smp "$VM_SMP" -m "$VM_MEM" -M pc \
		-nodefaults -no-user-config -display none -net none -no-reboot \
		-kernel "$image/vmlinux" -initrd "$image/initrd" -append "$cmdline" \
		-drive "file=$image/root.img,format=raw,if=virtio,snapshot=on,cache=unsafe" \
		-drive "file=$run_dir/data.img,format=raw,if=virtio,snapshot=on,cache=unsafe" \
		-chardev "file,id=con,path=$con" -serial chardev:con \
		-device virtio-serial-pci,id=vser -chardev "file,id=tap,path=$tap" \
		-device virtserialport,bus=vser.0,chardev=tap,name=husk.tap \
		</dev/null >"$run_dir/qemu-$setup.out" 2>&1 &
	qpid=$!
	echo "$qpid" >"$run_dir/qemu.pid"
	rc= booted= why=
	local partial=
	exec {tapfd}< <(tail -n +1 -F --pid="$qpid" "$tap" 2>/dev/null)
	while :; do
		st=0
		IFS= read -r -t 5 line <&"$tapfd" || st=$?
		# A read that times out keeps what it got of a line still being
		# written: hold it for the next read.
		if [ "$st" -gt 128 ]; then
			partial="$partial$line"
		elif [ "$st" -eq 0 ]; then
			line="$partial${line%$'\r'}"
			partial=
			case "$line" in
			HUSK-VM-BOOTED*)
				booted=1
				say "setup $setup: guest runner started after $((SECONDS - start))s (${line#HUSK-VM-BOOTED })"
				;;
			HUSK-VM-RESULT*) rc="${line##*rc=}" ;;
			*) printf '%s\n' "$line" | tee -a "$run_dir/tap-$setup.log" ;;
			esac
			continue
		fi
		if [ "$st" -le 128 ]; then # EOF: QEMU exited
			[ -z "$partial$line" ] || printf '%s\n' "$partial$line" | tee -a "$run_dir/tap-$setup.log"
			break
		fi
		elapsed=$((SECONDS - start))
		if [ -z "$booted" ] && [ "$elapsed" -ge "$VM_BOOT_TIMEOUT" ]; then
			why="the guest did not start its runner within ${VM_BOOT_TIMEOUT}s"
			kill -9 "$qpid" 2>/dev/null || true
		elif [ "$elapsed" -ge "$VM_TIMEOUT" ]; then
			why="the guest hung: killed after ${VM_TIMEOUT}s (VM_TIMEOUT)"
			kill -9 "$qpid" 2>/dev/null || true
		fi
	done
	exec {tapfd}<&-
	wait "$qpid" 2>/dev/null || true
	: >"$run_dir/qemu.pid"
	if [ -z "$rc" ] && [ -z "$why" ]; then
		why="QEMU exited without a result: $(tail -3 "$run_dir/qemu-$setup.out" | tr '\n' ' ')"
	fi
	cp "$con" "$run_dir/console-$setup.log"
	say "setup $setup: guest done after $((SECONDS - start))s"
}

# report_failure SETUP: the failing tests and the end of the console.
report_failure() {
	local setup="$1"
	echo "# ---- setup $setup failed: ${why:-bats exit status $rc}"
	if grep -q '^not ok' "$run_dir/tap-$setup.log" 2>/dev/null; then
		echo "# failing tests:"
		grep '^not ok' "$run_dir/tap-$setup.log" | sed 's/^/#   /'
	fi
	echo "# last lines of the guest console:"
	tail -40 "$run_dir/console-$setup.log" | tr -d '\r' | sed 's/^/#   /'
}

failed=()
for setup in $VM_SETUPS; do
	case "$setup" in
	a) echo "# ==== setup a: pure cgroup v2, systemd as PID 1 ($VM_MODE)" ;;
	b) echo "# ==== setup b: pure cgroup v2, no systemd, cgroupfs ($VM_MODE)" ;;
	c) echo "# ==== setup c: as b, AppArmor on ($VM_MODE)" ;;
	d) echo "# ==== setup d: as b, SELinux on, permissive ($VM_MODE)" ;;
	esac
	s0=$SECONDS
	: >"$run_dir/tap-$setup.log"
	boot "$setup" 1
	if [ -z "$booted" ]; then
		say "setup $setup: $why; retrying once"
		tail -15 "$run_dir/console-$setup.log" | tr -d '\r' | sed 's/^/#   /'
		boot "$setup" 2
	fi
	if [ "$rc" != 0 ]; then
		failed+=("$setup")
		report_failure "$setup"
	fi
	[ "$VM_MODE" != test ] || awk -f "$repo/tests/integration/summary.awk" "$run_dir/tap-$setup.log" |
		tail -1 | sed "s/^/# setup $setup: /"
	say "setup $setup took $((SECONDS - s0))s"
done
say "the whole lane took $((SECONDS - t0))s"
if [ "${#failed[@]}" -gt 0 ]; then
	say "FAILED setups: ${failed[*]}"
	exit 1
fi
