#!/usr/bin/env bats
# critest, the CRI validation suite of cri-tools (built from the Go module
# proxy by build.sh, cached), against a private containerd whose CRI runs the
# runtime under test. Its images are served on their original references by
# a local registry (tests/clients/critest/registry) that containerd's
# hosts.toml mirrors registry.k8s.io, k8s.gcr.io and gcr.io to.
#
# The skip list is the same for every runtime, and names only what this
# machine lacks; HUSK_CLIENT_RUNTIME=/usr/sbin/runc is the reference.
# CRITEST_FOCUS (a regular expression) runs only the specs it matches.

load helpers

# critest's pods have the cgroup parent /test.slice: with SystemdCgroup =
# false containerd names their cgroups test.slice:cri-containerd:<id>, a
# path relative to the shim's cgroup.
POD_CGROUPS='test.slice:cri-containerd:*'

# CRITEST_SKIP: specs skipped for every runtime, each for what the machine
# lacks (the reason beside it).
CRITEST_SKIP=(
	# No AppArmor, no SELinux on this kernel.
	'AppArmor' 'SELinux'
	# The reference pins the digest of upstream's image; only upstream's
	# bytes have it, and no registry on the internet is reached.
	'public image with digest should be pulled and removed'
)

# CRITEST_KNOWN_FAILURES: specs that fail for every runtime, each for a
# reason outside the runtime (beside it); critest runs them, and the test
# fails on any other failure. containerd 1.6 adds its own (known_failures).
CRITEST_KNOWN_FAILURES=(
	# Debian's busybox-static runs its applets in the shell (SH_STANDALONE):
	# `sh -c ls` never execs the masked /bin/ls, as busybox images' sh does.
	'runtime should support MaskedPaths'
)

# CRITEST_RACES: specs that race in the client whatever the runtime does,
# each with its race beside it. One that fails is run again alone, up to
# three times; one of those must pass (runc raced in 2 of 8 runs here).
CRITEST_RACES=(
	# The shim watches a cgroup v1 memory.oom_control only once `start`
	# has returned (containerd's runc shim, Start: s.ep.Add after
	# container.Start): the spec's process, OOM-killed within milliseconds
	# of its exec, can be killed before, and its reason is then Error.
	'should terminate with exitCode 137 and reason OOMKilled'
	# Failed once, with the reference runc (CI, 2026-11-29), and passed in
	# 3 full runs and 3 runs alone here; the record kept no message, so
	# its race is not known yet (failure_detail now prints it).
	'should fail RunPodSandbox and clean up when the NRI hook errors'
)

# known_failures prints CRITEST_KNOWN_FAILURES and those of the containerd
# in use, one per line.
known_failures() {
	printf '%s\n' "${CRITEST_KNOWN_FAILURES[@]}"
	# containerd 1.6 answers StopContainer and StopPodSandbox of an unknown
	# id with NotFound; the CRI (and containerd 1.7+) with success.
	if containerd --version | grep -q ' v\?1\.6\.'; then
		echo 'Idempotence StopContainer .*should not return an error if not found'
		echo 'Idempotence StopPodSandbox .*should not return an error if not found'
	fi
}

setup_file() {
	runtime_ready
	require_cmd iptables
	export SUITE_DIR CRITEST_DIR CGROUP_PARENT
	SUITE_DIR="$(new_suite_dir)"
	CRITEST_DIR="$("$REPO_ROOT/tests/clients/build.sh" critest)" || fail "cannot build critest (tests/clients/build.sh critest)"
	registry_start "$SUITE_DIR"
	local addr host
	addr="$(cat "$SUITE_DIR/registry.addr")"
	for host in registry.k8s.io k8s.gcr.io gcr.io; do
		mkdir -p "$SUITE_DIR/certs.d/$host"
		printf 'server = "https://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' \
			"$host" "$addr" >"$SUITE_DIR/certs.d/$host/hosts.toml"
	done
	iptables_chain_names >"$SUITE_DIR/chains.before"
	shm_ids >"$SUITE_DIR/shm.before"
	CONTAINERD_CONFIG_EXTRA="[plugins.\"io.containerd.grpc.v1.cri\".registry]
  config_path = \"$SUITE_DIR/certs.d\"" \
		CNI_EXTRA_PLUGINS='{"type": "portmap", "capabilities": {"portMappings": true}}' \
		PAUSE_REF=registry.k8s.io/pause:3.9 containerd_start "$SUITE_DIR" cri
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	containerd_stop "$SUITE_DIR"
	registry_stop "$SUITE_DIR"
	clean_leaks "$SUITE_DIR" "$POD_CGROUPS"
	iptables_take_back "$SUITE_DIR/chains.before"
	shm_take_back "$SUITE_DIR/shm.before"
	rm -rf "$SUITE_DIR"
}

# registry_start DIR: the image registry of critest's images, on 127.0.0.1;
# its address goes to DIR/registry.addr, its PID to DIR/registry.pid.
registry_start() {
	local d="$1" rootfs l
	rootfs="$(build_rootfs)" || fail "cannot build the busybox rootfs"
	# busybox images link their applets hard, not symbolically: critest
	# masks /bin/ls (a bind of /dev/null over a symlink would mask busybox).
	cp -a "$rootfs" "$d/rootfs"
	for l in "$d"/rootfs/bin/*; do
		[ "$(readlink "$l")" != busybox ] || ln -f "$d/rootfs/bin/busybox" "$l"
	done
	rootfs="$d/rootfs"
	tar -C "$rootfs" --exclude=./.complete --sort=name --mtime=@0 --owner=0 --group=0 \
		--numeric-owner -cf "$d/rootfs.tar" . || fail "tar of $rootfs"
	"$CRITEST_DIR/registry" -rootfs "$d/rootfs.tar" -nginx "$CRITEST_DIR/nginx" -nnp "$CRITEST_DIR/nnp" -pause "$CRITEST_DIR/pause" \
		-addr-file "$d/registry.addr" </dev/null >"$d/registry.log" 2>&1 3>&- &
	echo $! >"$d/registry.pid"
	wait_until 120 test -s "$d/registry.addr" || {
		cat "$d/registry.log" >&2
		fail "the registry did not come up"
	}
}

registry_stop() {
	daemon_stop "$1/registry.pid"
}

# iptables_chain_names: "table chain" of every iptables chain the CNI
# plugins name (CNI-*); others belong to whatever else runs on the host.
iptables_chain_names() {
	local t
	for t in filter nat mangle; do
		iptables -t "$t" -S 2>/dev/null | awk -v t="$t" '$1 == "-N" && $2 ~ /^CNI-/ {print t, $2}'
	done | sort
}

# shm_ids: the ids of the host's System V shared memory segments.
shm_ids() {
	awk 'NR > 1 {print $2}' /proc/sysvipc/shm | sort
}

# shm_take_back BEFORE-FILE: remove the segments made since BEFORE-FILE
# (critest's HostIpc specs make one on the host with ipcmk, and leave it).
shm_take_back() {
	comm -13 "$1" <(shm_ids) | xargs -r -n1 ipcrm -m 2>/dev/null || true
}

# iptables_take_back BEFORE-FILE: delete the CNI chains made since
# BEFORE-FILE (portmap's CNI-HOSTPORT-*, which it never removes) and the
# rules jumping to them.
iptables_take_back() {
	local t c rule
	comm -13 "$1" <(iptables_chain_names) | while read -r t c; do
		iptables -t "$t" -S | grep -E -- "-j $c( |\$)" | grep '^-A' | while read -r rule; do
			eval "iptables -t $t -D ${rule#-A }" 2>/dev/null || true
		done
	done
	comm -13 "$1" <(iptables_chain_names) | while read -r t c; do
		iptables -t "$t" -F "$c" 2>/dev/null || true
	done
	comm -13 "$1" <(iptables_chain_names) | while read -r t c; do
		iptables -t "$t" -X "$c" 2>/dev/null || true
	done
}

@test "critest: the CRI validation suite passes with the runtime under test" {
	local skip out="$SUITE_DIR/critest.out" summary NRI_SOCKET=""
	# containerd 2.x serves NRI on the suite's socket (containerd_start);
	# 1.6 has none, and critest then skips the NRI specs itself.
	[ ! -S "$SUITE_DIR/nri.sock" ] || NRI_SOCKET="$SUITE_DIR/nri.sock"
	skip="$(IFS='|'; echo "${CRITEST_SKIP[*]}")"
	cd "$SUITE_DIR"
	run timeout -k 10 2400 "$CRITEST_DIR/critest" \
		-runtime-endpoint "unix://$SUITE_DIR/c.sock" -image-endpoint "unix://$SUITE_DIR/c.sock" \
		${NRI_SOCKET:+-nri-socket "$NRI_SOCKET"} -ginkgo.skip "$skip" ${CRITEST_FOCUS:+-ginkgo.focus "$CRITEST_FOCUS"} -ginkgo.no-color -ginkgo.junit-report "$SUITE_DIR/junit.xml"
	printf '%s\n' "$output" >"$out"
	summary="$(grep -E '^(Ran [0-9]+ of [0-9]+ Specs|FAIL!|SUCCESS!)' "$out" | tr '\n' ' ')"
	echo "# critest ($CLIENT_RUNTIME, $(containerd --version | awk '{print $3}')): $summary" >&3
	mkdir -p "${HUSK_CRITEST_REPORT_DIR:-$BATS_RUN_TMPDIR}"
	cp "$SUITE_DIR/junit.xml" "$out" "${HUSK_CRITEST_REPORT_DIR:-$BATS_RUN_TMPDIR}/" 2>/dev/null || true
	# Failures outside the known list fail the test.
	local failed unexpected
	failed="$(sed -n 's/^ *\[FAIL\] //p' "$out" | sort -u)"
	[ -z "$failed" ] || echo "$failed" | sed 's/^/# failed: /' >&3
	unexpected="$(echo "$failed" | grep -v -E -f <(known_failures) | grep . || true)"
	[ -z "$unexpected" ] || failure_detail "$out" "$unexpected" >&3
	unexpected="$(rerun_races "$unexpected" "$skip" "$NRI_SOCKET")"
	[ -z "$unexpected" ] || fail "critest: specs failed: $unexpected"
	grep -qE '^Ran [0-9]+ of' "$out" || fail "critest did not run (exit $status): $(tail -20 "$out")"
}

# failure_detail OUT SPECS: the report in critest's output OUT of each
# failed spec among SPECS (one a line), each line as a bats comment: its
# name, its steps, and what failed where (60 lines at most a spec).
failure_detail() {
	awk -v specs="$2" '
		BEGIN { n = split(specs, want, "\n") }
		/^------------------------------$/ { flush(); next }
		{ block[++lines] = $0 }
		END { flush() }
		function flush(   i, j, hit, after, shown) {
			hit = 0
			for (i = 1; i <= lines && i <= 3; i++)
				for (j = 1; j <= n; j++)
					if (want[j] != "" && index(block[i], want[j])) hit = 1
			if (hit && index(block[1], "[FAILED]"))
				for (i = 1; i <= lines && shown < 60; i++) {
					if (block[i] ~ /<< Timeline/) after = 1
					if (i <= 2 || after || block[i] ~ /STEP:|\[FAILED\]/) {
						print "#   " block[i]; shown++
					}
				}
			lines = 0
		}
	' "$1"
}

# rerun_races FAILED SKIP NRI_SOCKET: prints FAILED (one spec a line) less
# each spec of CRITEST_RACES that passes when critest runs it again alone.
rerun_races() {
	local spec race again try
	while IFS= read -r spec; do
		[ -n "$spec" ] || continue
		for race in "${CRITEST_RACES[@]}"; do
			[[ "$spec" == *"$race"* ]] || continue
			again="$SUITE_DIR/critest-again.out"
			for try in 1 2 3; do
				timeout -k 10 600 "$CRITEST_DIR/critest" \
					-runtime-endpoint "unix://$SUITE_DIR/c.sock" -image-endpoint "unix://$SUITE_DIR/c.sock" \
					${3:+-nri-socket "$3"} -ginkgo.skip "$2" -ginkgo.focus "$race" -ginkgo.no-color \
					>"$again" 2>&1 || true
				if grep -q '^SUCCESS!' "$again" && grep -qE '^Ran 1 of' "$again"; then
					echo "# raced, then passed alone (try $try): $spec" >&3
					continue 3
				fi
			done
		done
		echo "$spec"
	done <<<"$1"
}

@test "zz: containerd and the registry stop, and nothing is left behind" {
	local veths chains
	containerd_stop "$SUITE_DIR"
	registry_stop "$SUITE_DIR"
	veths="$(ip -o link show master hcri0 2>/dev/null || true)"
	[ -z "$veths" ] || fail "veths still on hcri0: $veths"
	ip link delete hcri0 2>/dev/null || true
	# portmap's chains: CNI-HOSTPORT-* stay (shared, empty), a pod's go.
	chains="$(comm -13 "$SUITE_DIR/chains.before" <(iptables_chain_names) | grep -v -e ' CNI-HOSTPORT-' || true)"
	iptables_take_back "$SUITE_DIR/chains.before"
	shm_take_back "$SUITE_DIR/shm.before"
	[ -z "$chains" ] || fail "iptables chains left: $chains"
	assert_nothing_left "$SUITE_DIR" "$POD_CGROUPS"
}
