#!/usr/bin/env bats
# process.scheduler, ioPriority, execCPUAffinity (the LSM labels: lsm.bats),
# and linux.personality, memoryPolicy: applied inside the container, or
# refused with the field and the value named.

load helpers

# run_in_container CMD: husk run the busybox shell command CMD; $output is
# its stdout and stderr.
run_in_container() {
	local id
	id="$(new_id)"
	set_args sh -c "$1"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	local got="$output"
	assert_no_container "$id"
	output="$got"
}

# Fields of /proc/self/stat: 19 nice, 40 rt_priority, 41 policy.
@test "process.scheduler: SCHED_BATCH with nice 5" {
	update_config '.process.scheduler = {"policy": "SCHED_BATCH", "nice": 5}'
	run_in_container 'cut -d" " -f19,41 /proc/self/stat'
	[ "$output" = "5 3" ] || fail "nice and policy: $output, want '5 3' (SCHED_BATCH is 3)"
}

@test "process.scheduler: SCHED_IDLE, inherited by children" {
	update_config '.process.scheduler = {"policy": "SCHED_IDLE"}'
	run_in_container 'cat /proc/self/stat | cut -d" " -f41'
	[ "$output" = "5" ] || fail "policy: $output, want 5 (SCHED_IDLE)"
}

@test "process.scheduler: SCHED_FIFO priority 10 with a realtime budget" {
	[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] || skip "no cgroup v1 cpu controller with RT group scheduling"
	local id
	id="$(new_id)"
	# With RT group scheduling a new cgroup has no realtime time unless
	# linux.resources.cpu.realtimeRuntime gives it some, and only a parent
	# with a budget can: the cgroup goes right under the root.
	update_config --arg p "/$id" '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 10}
		| .linux.cgroupsPath = $p
		| .linux.resources.cpu = {"realtimeRuntime": 10000, "realtimePeriod": 1000000}'
	set_args sh -c 'cut -d" " -f40,41 /proc/self/stat'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "10 1" ] || fail "rt_priority and policy: $output, want '10 1'"
}

@test "process.scheduler: a bad policy is refused at create" {
	update_config '.process.scheduler = {"policy": "SCHED_FAST"}'
	create_fails_with "process.scheduler.policy" "SCHED_FAST"
}

@test "process.scheduler: priority out of range is refused at create" {
	update_config '.process.scheduler = {"policy": "SCHED_RR", "priority": 100}'
	create_fails_with "process.scheduler.priority" "100"
}

@test "process.ioPriority: IOPRIO_CLASS_BE priority 6" {
	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 6}'
	run_in_container 'ionice'
	[ "$output" = "best-effort: prio 6" ] || fail "ionice: $output"
}

@test "process.ioPriority: IOPRIO_CLASS_IDLE" {
	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_IDLE"}'
	run_in_container 'ionice'
	[ "$output" = "idle" ] || fail "ionice: $output"
}

@test "process.ioPriority: a bad class is refused at create" {
	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_FAST", "priority": 1}'
	create_fails_with "process.ioPriority.class" "IOPRIO_CLASS_FAST"
}

@test "process.execCPUAffinity: final pins the process" {
	[ "$(nproc --all)" -ge 2 ] || skip "needs 2 CPUs"
	update_config '.process.execCPUAffinity = {"initial": "0", "final": "1"}'
	run_in_container 'grep Cpus_allowed_list /proc/self/status'
	[[ "$output" =~ Cpus_allowed_list:[[:space:]]+1$ ]] || fail "affinity: $output, want 1"
}

@test "process.execCPUAffinity: initial alone is applied to init" {
	[ "$(nproc --all)" -ge 2 ] || skip "needs 2 CPUs"
	update_config '.process.execCPUAffinity = {"initial": "1"}'
	run_in_container 'grep Cpus_allowed_list /proc/self/status'
	[[ "$output" =~ Cpus_allowed_list:[[:space:]]+1$ ]] || fail "affinity: $output, want 1"
}

@test "process.execCPUAffinity: a bad cpu list is refused at create" {
	update_config '.process.execCPUAffinity = {"final": "0-x"}'
	create_fails_with "process.execCPUAffinity.final" '"0-x"'
}

@test "linux.personality: LINUX32 makes uname -m say i686" {
	[ "$(uname -m)" = x86_64 ] || skip "LINUX32 on x86_64 only"
	update_config '.linux.personality = {"domain": "LINUX32"}'
	run_in_container 'uname -m'
	[ "$output" = "i686" ] || fail "uname -m: $output"
}

@test "linux.personality: LINUX keeps the native machine" {
	update_config '.linux.personality = {"domain": "LINUX"}'
	run_in_container 'uname -m'
	[ "$output" = "$(uname -m)" ] || fail "uname -m: $output"
}

@test "linux.personality: a bad domain is refused at create" {
	update_config '.linux.personality = {"domain": "LINUX64"}'
	create_fails_with "linux.personality.domain" "LINUX64"
}

@test "linux.memoryPolicy: MPOL_BIND to node 0" {
	[ -e /proc/self/numa_maps ] || skip "kernel without NUMA (no /proc/self/numa_maps)"
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0"}'
	run_in_container 'head -1 /proc/self/numa_maps'
	[[ "$output" == *" bind:0 "* ]] || fail "numa_maps: $output, want bind:0"
}

@test "linux.memoryPolicy: MPOL_BIND without nodes is refused at create" {
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND"}'
	create_fails_with "linux.memoryPolicy.nodes" "MPOL_BIND"
}

@test "linux.intelRdt: refused on a host without resctrl" {
	[ ! -e /sys/fs/resctrl/schemata ] || skip "this host has resctrl"
	update_config '.linux.intelRdt = {"closID": "husk"}'
	create_fails_with "linux.intelRdt" "Intel RDT is not enabled on this host"
}

@test "process.rlimits: RLIMIT_NOFILE soft and hard" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 100, "hard": 200}]'
	run_in_container 'echo $(ulimit -n) $(ulimit -Hn)'
	[ "$output" = "100 200" ] || fail "ulimit: $output"
}

@test "process.capabilities: the sets reach the process" {
	update_config '.process.capabilities = {"bounding": ["CAP_KILL", "CAP_CHOWN"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"], "inheritable": ["CAP_KILL"], "ambient": ["CAP_KILL"]}'
	run_in_container 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status'
	# CAP_KILL is bit 5 (0x20), CAP_CHOWN bit 0.
	assert_contains "$output" "CapInh:	0000000000000020" "CapPrm:	0000000000000020" \
		"CapEff:	0000000000000020" "CapBnd:	0000000000000021" "CapAmb:	0000000000000020"
}

@test "process.noNewPrivileges: true sets NoNewPrivs" {
	update_config '.process.noNewPrivileges = true'
	run_in_container 'grep NoNewPrivs /proc/self/status'
	assert_contains "$output" "NoNewPrivs:	1"
}

@test "process.oomScoreAdj: applied to the process" {
	update_config '.process.oomScoreAdj = 123'
	run_in_container 'cat /proc/self/oom_score_adj'
	[ "$output" = 123 ] || fail "oom_score_adj: $output"
}

@test "process.user.umask: applied to the process" {
	update_config '.process.user.umask = 63'
	run_in_container 'umask'
	[ "$output" = 0077 ] || fail "umask: $output"
}

@test "linux.sysctl: a network sysctl is set in the container's namespace" {
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1"}'
	run_in_container 'cat /proc/sys/net/ipv4/ip_forward'
	[ "$output" = 1 ] || fail "ip_forward: $output"
}

@test "domainname: set in the container's uts namespace" {
	update_config '.domainname = "example.org"'
	run_in_container 'cat /proc/sys/kernel/domainname'
	[ "$output" = example.org ] || fail "domainname: $output"
}

@test "linux.devices: a listed device node is made with its mode and owner" {
	update_config '.linux.devices = [{"path": "/dev/husknull", "type": "c", "major": 1, "minor": 3, "fileMode": 432, "uid": 1000, "gid": 1000}]'
	run_in_container 'stat -c "%t:%T %a %u:%g" /dev/husknull'
	[ "$output" = "1:3 660 1000:1000" ] || fail "stat: $output"
}

@test "session keyring: the process has a session keyring of its own" {
	# /proc/keys is masked by the default spec.
	update_config '.linux.maskedPaths = []'
	run_in_container 'grep " _ses" /proc/keys | wc -l'
	[ "$output" -ge 1 ] || fail "no session keyring: $output"
}

@test "process.cwd is entered before the user switch, as runc (uid 1000, cwd /root mode 0700)" {
	chmod 0700 "$BUNDLE/rootfs/root"
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.cwd = "/root"'
	run_in_container 'echo "$(id -u) $PWD"'
	[ "$output" = "1000 /root" ] || fail "output: $output"
}

@test "process.cwd only the process's user can enter still works" {
	mkdir -p "$BUNDLE/rootfs/home/user/private"
	chown 1000:1000 "$BUNDLE/rootfs/home/user/private"
	chmod 0700 "$BUNDLE/rootfs/home/user/private"
	# Root loses CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH first.
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.cwd = "/home/user/private"
		| .process.capabilities = {bounding: ["CAP_SETUID", "CAP_SETGID"], effective: [], permitted: []}'
	run_in_container 'pwd'
	[ "$output" = /home/user/private ] || fail "output: $output"
}

# raw_environ: $output is the environment execve gave the process (pid 1's
# /proc/1/environ, which a shell does not rewrite), a space after each.
raw_environ() {
	local id
	id="$(new_id)"
	set_args sh -c 'tr "\\0" " " </proc/1/environ; echo'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
}

@test "process.env: a key given twice keeps the last value, once" {
	update_config '.process.env = ["PATH=/bin", "A=first", "B=b", "A=last"]'
	# The environment execve got, not a shell's (a shell dedups it).
	raw_environ
	[ "$output" = "PATH=/bin B=b A=last HOME=/root " ] || fail "environ: $output"
}

@test "process.env: an empty HOME= is replaced by the user's home, once" {
	update_config '.process.env = ["PATH=/bin", "HOME="] | .process.user = {uid: 1000, gid: 1000}'
	raw_environ
	[ "$output" = "PATH=/bin HOME=/home/user " ] || fail "environ: $output"
}

@test "process: the caller's CPU affinity does not leak into the container (taskset -c 0 husk run)" {
	[ "$(nproc --all)" -gt 1 ] || skip "needs more than one CPU"
	command -v taskset >/dev/null || skip "no taskset"
	local id want
	id="$(new_id)"
	want="$(cat /sys/devices/system/cpu/online)"
	set_args grep Cpus_allowed_list /proc/self/status
	run -0 taskset -c 0 "$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "Cpus_allowed_list:	$want" ] || fail "container: $output, want $want"
	# execCPUAffinity still applies after the reset.
	update_config '.process.execCPUAffinity = {"final": "1"}'
	run -0 taskset -c 0 "$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "Cpus_allowed_list:	1" ] || fail "with final 1: $output"
}

@test "process: the caller's CPU affinity does not leak into an exec'd process" {
	[ "$(nproc --all)" -gt 1 ] || skip "needs more than one CPU"
	command -v taskset >/dev/null || skip "no taskset"
	local id want
	id="$(new_id)"
	want="$(cat /sys/devices/system/cpu/online)"
	set_args sleep 1000
	run_bg "$id"
	run -0 taskset -c 0 "$HUSK_BIN" --root "$HUSK_ROOT" exec "$id" grep Cpus_allowed_list /proc/self/status </dev/null
	[ "$output" = "Cpus_allowed_list:	$want" ] || fail "exec'd: $output, want $want"
	husk delete --force "$id"
}

@test "process: a user with CAP_DAC_OVERRIDE runs a binary it cannot read" {
	mkdir -p "$BUNDLE/rootfs/secret"
	cp "$BUNDLE/rootfs/bin/busybox" "$BUNDLE/rootfs/secret/echo"
	chmod 0700 "$BUNDLE/rootfs/secret/echo"
	update_config '.process.user = {uid: 1000, gid: 1000}
		| .process.capabilities = {bounding: ["CAP_DAC_OVERRIDE"], effective: ["CAP_DAC_OVERRIDE"],
			permitted: ["CAP_DAC_OVERRIDE"]}'
	local id
	id="$(new_id)"
	set_args /secret/echo ran-it
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = ran-it ] || fail "output: $output"
}

@test "process.capabilities: unknown names are ignored with runc's warning" {
	update_config '.process.capabilities.bounding += ["CAP_FOO"] | .process.capabilities.effective += ["CAP_FOO"]'
	local id
	id="$(new_id)"
	set_args true
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "ignoring unknown or unavailable capabilities: [CAP_FOO]" "process.capabilities"
}

@test "ociVersion that is not SemVer is refused, naming the field" {
	update_config '.ociVersion = "banana"'
	create_fails_with "ociVersion" '"banana"' "SemVer"
}

@test "linux.memoryPolicy errors have runc's phrase 'invalid memory policy' and name the field" {
	update_config '.linux.memoryPolicy = {"mode": "MPOL_FAST"}'
	create_fails_with "linux.memoryPolicy.mode" "invalid memory policy" "MPOL_FAST"
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_FAST"]}'
	create_fails_with "linux.memoryPolicy.flags[0]" "invalid memory policy" "MPOL_F_FAST"
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0-x"}'
	create_fails_with "linux.memoryPolicy.nodes" "invalid memory policy" "0-x"
}

@test "linux.sysctl: kernel.hostname is refused (the hostname field sets it), as runc and crun (where crun runs)" {
	load runtimes
	older_spec
	update_config '.hostname = "h1" | .linux.sysctl = {"kernel.hostname": "h2"}'
	local bin id
	for bin in $(runtimes); do
		id="$(new_id)"
		run ! --separate-stderr rt "$bin" run --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$stderr" "kernel.hostname"
		[ "$bin" = "$HUSK_BIN" ] && assert_contains "$stderr" 'linux.sysctl: "kernel.hostname" conflicts with the "hostname" field'
		rt "$bin" delete -f "$id" 2>/dev/null || true
	done
	assert_no_container "$id"
}

@test "linux.sysctl: a user.* sysctl is set in the container's user namespace" {
	requires_userns
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.sysctl = {"user.max_user_namespaces": "7"}'
	run_in_container 'cat /proc/sys/user/max_user_namespaces'
	[ "$output" = 7 ] || fail "user.max_user_namespaces: $output"
	[ "$(cat /proc/sys/user/max_user_namespaces)" != 7 ] || fail "the host's user.max_user_namespaces was changed"
}

@test "process.cwd missing is made in the rootfs (0755, root's) before it is read-only, as runc and crun (where crun runs)" {
	load runtimes
	older_spec
	update_config '.root.readonly = true | .process.cwd = "/work/new/deep"'
	set_args sh -c 'pwd; stat -c "%a %u:%g" /work/new/deep /work'
	local bin id
	for bin in $(runtimes); do
		rm -rf "$BUNDLE/rootfs/work"
		id="$(new_id)"
		run -0 rt "$bin" run --bundle "$BUNDLE" "$id" </dev/null
		[ "${lines[0]}" = /work/new/deep ] || fail "$bin: cwd: $output"
		[ "${lines[1]}" = "755 0:0" ] && [ "${lines[2]}" = "755 0:0" ] || fail "$bin: made: $output"
	done
	rm -rf "$BUNDLE/rootfs/work"
}

@test "process.cwd under a symlink pointing out of the rootfs is made inside it" {
	local host="/tmp/husk-cwd-escape-$$-$RANDOM"
	ln -s "../../../../../../..$host" "$BUNDLE/rootfs/out"
	update_config '.process.cwd = "/out/sub"'
	run_in_container 'pwd -P'
	[ ! -e "$host" ] || { rm -rf "$host"; fail "process.cwd made $host on the host"; }
	[ -d "$BUNDLE/rootfs$host/sub" ] || fail "not made in the rootfs: $output"
	[ "$output" = "$host/sub" ] || fail "cwd: $output"
}

# stdio becomes process.user's, as in runc and crun: a process not run as
# root can reopen /dev/stdout (here a pipe, its inode root's, mode 0600).
@test "process.user: stdio is the user's, so it can reopen /dev/stdout; /dev/null stays root's" {
	local id
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	run_in_container 'echo via-reopen >/dev/stdout && echo err-reopen >/dev/stderr && stat -L -c %u /dev/stdout && stat -L -c %u /proc/self/fd/0'
	[ "$output" = "via-reopen
err-reopen
1000
0" ] || fail "output: $output"
	[ "$(stat -c %u /dev/null)" = 0 ] || fail "the host's /dev/null changed owner"
	# An exec: its stdio too.
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	run -0 husk exec --user 1000:1000 "$id" sh -c 'echo exec-reopen >/dev/stdout' </dev/null
	[ "$output" = exec-reopen ] || fail "exec output: $output"
	run -0 husk kill "$id" KILL
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
	assert_no_container "$id"
}

# Issue 36 item 3: the scheduler is set before the capabilities drop, as
# runc sets it; a SCHED_DEADLINE exec forks first (such a task cannot).
@test "process.scheduler: an exec as a user without CAP_SYS_NICE gets SCHED_DEADLINE, set before the capabilities drop" {
	local id
	id="$(new_id)"
	set_args sleep 1000
	run_bg "$id"
	# One process: a SCHED_DEADLINE task cannot fork.
	jq -n '{args: ["grep", "-hE", "^policy |^Uid:", "/proc/self/sched", "/proc/self/status"], cwd: "/",
		user: {uid: 1000, gid: 1000}, capabilities: {},
		scheduler: {policy: "SCHED_DEADLINE", runtime: 42000, deadline: 1000000, period: 1000000}}' \
		>"$TEST_DIR/proc.json"
	run --separate-stderr husk exec --process "$TEST_DIR/proc.json" "$id"
	[ "$status" = 0 ] || fail "exec: exit $status: $stderr"
	[[ "$output" =~ ^policy[[:space:]]+:[[:space:]]+6 ]] || fail "policy: $output"
	[[ "$output" =~ Uid:[[:space:]]+1000[[:space:]] ]] || fail "uid: $output"
	run -0 husk delete --force "$id"
	assert_no_container "$id"
}
