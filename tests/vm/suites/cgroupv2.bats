#!/usr/bin/env bats
# husk on a pure cgroup v2 host with the cgroupfs driver (issue 13's
# must-hold list): limits enforced and written as given, update, pause,
# kill --all, devices through the eBPF program, exec'd processes born in
# the container's cgroup, delete, many cycles, bad input. Runs whole in VM
# setup b (no systemd) and on any pure v2 host. In setup a (systemd is PID 1
# but husk manages the cgroups itself, as `runc run` does by default) only
# the tests of what systemd could disturb run: the files written beside its
# tree, freeze, kill --all, and delete (the cycles run in systemd.bats there
# with the systemd driver). The rest is
# the same driver on the same kernel, and each test costs 10-20 s of the
# lane's time budget under TCG.

load ../../integration/helpers

# in_setup_a: the tests setup a runs.
in_setup_a() {
	case "$BATS_TEST_DESCRIPTION" in
	*"every linux.resources field"* | *"pause sets cgroup.freeze"* | *"kill --all empties"* | *"100 run/delete cycles"*) return 0 ;;
	esac
	return 1
}

setup() {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || skip "not a pure cgroup v2 host"
	[ "${HUSK_VM_SETUP:-}" != a ] || in_setup_a || skip "the cgroupfs driver's whole suite runs in setup b"
	setup_husk
	set_ns cgroup
	update_config 'if any(.mounts[]; .destination == "/sys/fs/cgroup") then . else .mounts += [{"destination": "/sys/fs/cgroup",
		"type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}] end'
}

teardown() {
	teardown_husk
}

# cgdir ID: the container's cgroup directory on the host, from its state.
cgdir() {
	jq -r '.cgroup_paths[""] // empty' "$HUSK_ROOT/$1/state.json"
}

# wait_for FILE PATTERN: FILE gets a line matching PATTERN (60 s: TCG).
wait_for() {
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no line matching '$2' in $1: $(cat "$1" 2>/dev/null)"
}

# refused_each SPEC...: each SPEC is 'JQ|FIELD', a linux.resources
# assignment and the field its error must name; husk run of a spec with
# only that resource fails naming linux.resources.FIELD and leaves nothing.
refused_each() {
	local id field spec
	for spec in "$@"; do
		id="$(new_id)"
		field="${spec#*|}"
		update_config "del(.linux.resources) | .linux.resources.${spec%|*}"
		run ! --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$stderr" "linux.resources.$field"
		assert_no_container "$id"
		[ -z "$(find /sys/fs/cgroup -maxdepth 4 -type d -name "$id")" ] || fail "cgroup of $id left ($field)"
	done
}

@test "cgroupv2: memory.max 32M and a 64 MB allocation: OOM-killed, exit 137, events reports the oom" {
	local id dir
	id="$(new_id)"
	update_config '.linux.resources.memory = {"limit": 33554432, "swap": 33554432}'
	set_args sh -c 'while [ ! -e /tmp/go ]; do sleep 0.05; done
		exec awk "BEGIN { s = \"x\"; while (length(s) < 67108864) s = s s }"'
	create_bg "$id"
	dir="$(cgdir "$id")"
	[ "$(cat "$dir/memory.max")" = 33554432 ] || fail "memory.max: $(cat "$dir/memory.max")"
	husk events --interval 1s "$id" >"$TEST_DIR/events" 2>"$TEST_DIR/events.err" </dev/null 3>&- &
	track_bg $!
	wait_for "$TEST_DIR/events" '"type":"stats"'
	run -0 husk start "$id"
	touch "$BUNDLE/rootfs/tmp/go"
	wait_for_status "$id" stopped
	wait_for "$TEST_DIR/events" '"type":"oom"'
	grep -qE '^oom_kill [1-9]' "$dir/memory.events" || fail "memory.events: $(cat "$dir/memory.events")"
	run -0 husk delete "$id"
	# husk run reports the OOM kill as 128+9.
	id="$(new_id)"
	set_args awk 'BEGIN { s = "x"; while (length(s) < 67108864) s = s s }'
	run -137 husk run --bundle "$BUNDLE" "$id" </dev/null
}

@test "cgroupv2: pids.max is enforced; cpu.max, cpu.weight and io.max are written as given" {
	local id dir dev major minor
	id="$(new_id)"
	dev="$(lsblk -dnro MAJ:MIN,TYPE 2>/dev/null | awk '$2 == "disk" { print $1; exit }')"
	[ -n "$dev" ] || dev="$(awk '$4 ~ /^vd[a-z]$|^sd[a-z]$/ { print $1 ":" $2; exit }' /proc/partitions)"
	[ -n "$dev" ] || skip "no block device for io.max"
	major="${dev%:*}" minor="${dev#*:}"
	update_config --argjson ma "$major" --argjson mi "$minor" '.linux.resources.pids = {"limit": 10}
		| .linux.resources.cpu = {"quota": 50000, "period": 100000, "shares": 512}
		| .linux.resources.blockIO = {"throttleReadBpsDevice": [{"major": $ma, "minor": $mi, "rate": 1048576}],
			"throttleWriteIOPSDevice": [{"major": $ma, "minor": $mi, "rate": 100}]}'
	set_args sh -c '(while :; do sleep 100 & done) 2>/dev/null; echo forked; exec sleep 1000'
	run_bg "$id"
	wait_for "$TEST_DIR/$id.out" forked
	dir="$(cgdir "$id")"
	[ "$(cat "$dir/pids.max")" = 10 ] || fail "pids.max: $(cat "$dir/pids.max")"
	[ "$(cat "$dir/pids.current")" -le 10 ] || fail "pids.current: $(cat "$dir/pids.current")"
	grep -qE '^max [1-9]' "$dir/pids.events" || fail "pids.events: $(cat "$dir/pids.events")"
	[ "$(cat "$dir/cpu.max")" = "50000 100000" ] || fail "cpu.max: $(cat "$dir/cpu.max")"
	# shares 512 -> weight 59: runc's (and the cgroup library's) conversion,
	# which maps v1's default 1024 to v2's default 100.
	[ "$(cat "$dir/cpu.weight")" = 59 ] || fail "cpu.weight: $(cat "$dir/cpu.weight")"
	grep -qx "$dev rbps=1048576 wbps=max riops=max wiops=100" "$dir/io.max" || fail "io.max: $(cat "$dir/io.max")"
}

@test "cgroupv2: update changes memory, pids and cpu of a running container live" {
	local id dir
	id="$(new_id)"
	update_config '.linux.resources.memory = {"limit": 33554432} | .linux.resources.pids = {"limit": 20}
		| .linux.resources.cpu = {"quota": 20000, "period": 100000}'
	set_args sh -c 'while [ ! -e /tmp/go ]; do sleep 0.05; done
		echo "$(cat /sys/fs/cgroup/memory.max) $(cat /sys/fs/cgroup/pids.max) $(cat /sys/fs/cgroup/cpu.max)"; sleep 1000'
	run_bg "$id"
	dir="$(cgdir "$id")"
	run -0 husk update --memory 64m --pids-limit 30 --cpu-quota 50000 "$id"
	[ "$(cat "$dir/memory.max")" = 67108864 ] || fail "memory.max: $(cat "$dir/memory.max")"
	[ "$(cat "$dir/pids.max")" = 30 ] || fail "pids.max: $(cat "$dir/pids.max")"
	[ "$(cat "$dir/cpu.max")" = "50000 100000" ] || fail "cpu.max: $(cat "$dir/cpu.max")"
	touch "$BUNDLE/rootfs/tmp/go"
	wait_for "$TEST_DIR/$id.out" '^[0-9]'
	[ "$(cat "$TEST_DIR/$id.out")" = "67108864 30 50000 100000" ] || fail "inside: $(cat "$TEST_DIR/$id.out")"
	run -0 husk events --stats "$id"
	[ "$(jq .data.memory.usage.limit <<<"$output")" = 67108864 ] || fail "stats: $output"
	[ "$(jq .data.pids.limit <<<"$output")" = 30 ] || fail "stats: $output"
}

@test "cgroupv2: pause sets cgroup.freeze and state says paused; resume undoes it" {
	local id dir
	id="$(new_id)"
	set_args sleep 1000
	run_bg "$id"
	dir="$(cgdir "$id")"
	[ "$(cat "$dir/cgroup.freeze")" = 0 ] || fail "cgroup.freeze before: $(cat "$dir/cgroup.freeze")"
	run -0 husk pause "$id"
	[ "$(cat "$dir/cgroup.freeze")" = 1 ] || fail "cgroup.freeze: $(cat "$dir/cgroup.freeze")"
	grep -qx 'frozen 1' "$dir/cgroup.events" || fail "cgroup.events: $(cat "$dir/cgroup.events")"
	[ "$(container_status "$id")" = paused ]
	run -0 husk resume "$id"
	[ "$(cat "$dir/cgroup.freeze")" = 0 ] || fail "cgroup.freeze after resume: $(cat "$dir/cgroup.freeze")"
	[ "$(container_status "$id")" = running ]
	# A paused container is killed and deleted too (cgroup.kill).
	run -0 husk pause "$id"
	run -0 husk delete --force "$id"
	[ ! -d "$dir" ] || fail "$dir left"
}

@test "cgroupv2: kill --all empties the cgroup, also of processes left after init died" {
	local id dir
	id="$(new_id)"
	del_ns pid
	set_args sh -c 'sleep 1000 & sleep 1001 & echo started; exec sleep 1002'
	run_bg "$id"
	wait_for "$TEST_DIR/$id.out" started
	dir="$(cgdir "$id")"
	# Only init dies (husk kill KILL without a pid namespace takes every
	# process of the cgroup, as runc's does).
	kill -9 "$(husk state "$id" | jq -r .pid)"
	wait_for_status "$id" stopped
	[ -n "$(cat "$dir/cgroup.procs")" ] || fail "nothing left after init died"
	run -0 husk kill --all "$id" KILL
	local i
	for ((i = 0; i < 200; i++)); do
		[ -z "$(cat "$dir/cgroup.procs")" ] && break
		sleep 0.05
	done
	[ -z "$(cat "$dir/cgroup.procs")" ] || fail "left after kill --all: $(cat "$dir/cgroup.procs")"
	run -0 husk delete "$id"
	[ ! -d "$dir" ] || fail "delete left $dir"
}

@test "cgroupv2: a block device allowed by the spec opens, one not allowed does not (eBPF)" {
	local id dev major minor
	id="$(new_id)"
	local d
	for d in /dev/vda /dev/vdb /dev/sda /dev/loop0 /dev/*; do
		[ -b "$d" ] && (exec 3<"$d") 2>/dev/null || continue
		dev="$(printf '%d %d' "0x$(stat -c %t "$d")" "0x$(stat -c %T "$d")")"
		break
	done
	[ -n "$dev" ] || skip "no block device the host may open"
	read -r major minor <<<"$dev"
	update_config --argjson ma "$major" --argjson mi "$minor" \
		'.linux.devices += [{"path": "/dev/allowed", "type": "b", "major": $ma, "minor": $mi, "fileMode": 384}]
		| .linux.resources.devices = [{"allow": false, "access": "rwm"},
			{"allow": true, "type": "b", "major": $ma, "minor": $mi, "access": "r"}]
		| .process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"]
		| .process.capabilities.permitted += ["CAP_MKNOD"]'
	set_args sh -c "(exec 3</dev/allowed) && echo allowed-open
		(exec 3<>/dev/allowed) 2>/dev/null && echo allowed-rw || echo allowed-rw-denied
		mknod /dev/other b $major $((minor + 1)) && ((exec 3</dev/other) 2>/dev/null && echo other-open || echo other-denied)
		(exec 3</dev/null) && echo null-open"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "$(printf '%s\n' allowed-open allowed-rw-denied other-denied null-open)" ] || fail "output: $output"
}

# tracefs: the kernel's trace directory, mounted when it is not.
tracefs() {
	local t=/sys/kernel/tracing
	[ -e "$t/events/cgroup/cgroup_attach_task/enable" ] && { echo "$t"; return; }
	mount -t tracefs tracefs "$t" 2>/dev/null || true
	[ -e "$t/events/cgroup/cgroup_attach_task/enable" ] && echo "$t"
}

@test "cgroupv2: an exec'd process is born in the container's cgroup, never in husk's own" {
	local id dir t
	id="$(new_id)"
	set_args sleep 1000
	run_bg "$id"
	dir="$(cgdir "$id")"
	t="$(tracefs)"
	[ -n "$t" ] || skip "no tracefs with the cgroup_attach_task event"
	# Every move of a task between cgroups (a cgroup.procs write) is
	# traced; a process born in a cgroup (clone3 CLONE_INTO_CGROUP) is
	# never moved.
	echo >"$t/trace"
	echo 1 >"$t/events/cgroup/cgroup_attach_task/enable"
	run husk exec "$id" cat /proc/self/cgroup
	echo 0 >"$t/events/cgroup/cgroup_attach_task/enable"
	[ "$status" -eq 0 ] || fail "exec: $output"
	# The process's first look at itself: the container's cgroup, at the
	# root of its cgroup namespace.
	[ "$output" = "0::/" ] || fail "/proc/self/cgroup inside: $output"
	local moves
	moves="$(grep cgroup_attach_task "$t/trace" | grep -F "${dir#/sys/fs/cgroup}" || true)"
	[ -z "$moves" ] || fail "a process was moved into the container's cgroup (not born there): $moves"
	# And nothing husk started was ever in husk's cgroup: the exec's
	# husk init is not a child of husk's cgroup in the trace either.
	[ -z "$(grep cgroup_attach_task "$t/trace" | grep -E 'comm=husk' || true)" ] || fail "husk moved a task: $(cat "$t/trace")"
}

@test "cgroupv2: delete removes the cgroup; 100 run/delete cycles leave none" {
	local id dir i base
	id="$(new_id)"
	set_args sleep 1000
	run_bg "$id"
	dir="$(cgdir "$id")"
	[ -d "$dir" ] || fail "no cgroup $dir"
	run -0 husk delete --force "$id"
	[ ! -d "$dir" ] || fail "$dir left"
	# The 100 cycles with the cgroupfs driver run in setup b; setup a runs
	# them with the systemd driver (systemd.bats), which it is there for:
	# each cycle is seconds long under TCG.
	if [ "${HUSK_VM_SETUP:-}" = a ]; then
		echo "# setup a: the 100 cycles run with the systemd driver (systemd.bats)" >&3
		return 0
	fi
	base="$(new_id)"
	set_args true
	# husk run deletes the container when it exits (as runc run without
	# --keep): each run is one run/delete cycle.
	for i in $(seq 100); do
		husk run --bundle "$BUNDLE" "$base-$i" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- || fail "run $i: $(cat "$TEST_DIR/err")"
	done
	local left
	left="$(find /sys/fs/cgroup -maxdepth 4 -type d -name "$base-*")"
	[ -z "$left" ] || fail "cgroups left: $left"
	run -0 husk list -q
	[ -z "$output" ] || fail "containers left: $output"
}

@test "cgroupv2: husk killed at random points of create, then delete --force leaves no cgroup" {
	local id i pid
	set_args sleep 1000
	for i in $(seq 0 9); do
		id="$(new_id)"
		"$HUSK_BIN" --root "$HUSK_ROOT" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- &
		pid=$!
		sleep "0.$((i * 37 % 10))$((i * 7 % 10))"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		husk delete --force "$id" || fail "delete --force $id after kill -9 at step $i"
		[ -z "$(find /sys/fs/cgroup -maxdepth 4 -type d -name "$id")" ] || fail "cgroup of $id left (step $i)"
	done
}

@test "cgroupv2: exec into a container whose pids.max leaves a few pids works or fails in one line naming pids.max" {
	# The launcher sets the process up (born in the cgroup by clone3) and
	# forks it there, without a Go runtime. Forkers race for the last
	# pids meanwhile. About 30 s under TCG on an idle host.
	local id n
	id="$(new_id)"
	update_config '.linux.resources.pids = {"limit": 5}'
	set_args sleep 1000
	run_bg "$id"
	for n in 5 8; do
		run -0 husk update --pids-limit "$n" "$id"
		run --separate-stderr husk exec "$id" true
		if [ "$status" -ne 0 ]; then
			[ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "pids.max $n: not one line: $stderr"
			assert_contains "$stderr" pids.max
		fi
	done
	run -0 husk update --pids-limit 10 "$id"
	(
		while [ ! -e "$TEST_DIR/stop" ]; do
			husk exec -d "$id" sh -c 'while :; do sleep 0.3 & done' </dev/null >/dev/null 2>&1 3>&- || true
			sleep 0.5
		done
	) &
	local forker=$! i
	for i in 1 2 3 4; do
		run --separate-stderr husk exec "$id" true
		[ "$status" -eq 0 ] && continue
		[ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "racing forkers: not one line: $stderr"
		assert_contains "$stderr" pids.max
	done
	touch "$TEST_DIR/stop"
	wait "$forker"
}

@test "cgroupv2: a v1-only field is refused naming it, and leaves nothing behind" {
	refused_each 'memory = {"swappiness": 10}|memory.swappiness' \
		'memory = {"kernelTCP": 1048576}|memory.kernelTCP' \
		'network = {"classID": 1048577}|network.classID' \
		'cpu = {"realtimeRuntime": 1000}|cpu.realtimeRuntime' \
		'blockIO = {"leafWeight": 100}|blockIO.leafWeight'
}

@test "cgroupv2: events --stats and ps read the v2 files" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 50}'
	set_args sh -c 'sleep 1000 & exec sleep 1001'
	run_bg "$id"
	run -0 husk events --stats "$id"
	jq -e '.data.memory.usage.limit == 67108864 and .data.memory.usage.usage > 0 and .data.pids.limit == 50
		and .data.pids.current >= 1 and (.data.cpu.usage.total >= 0)' <<<"$output" >/dev/null || fail "stats: $output"
	local i
	for ((i = 0; i < 100; i++)); do
		run -0 husk ps --format json "$id"
		[ "$(jq length <<<"$output")" -eq 2 ] && break
		sleep 0.05
	done
	[ "$(jq length <<<"$output")" -eq 2 ] || fail "ps: $output"
}

# a_disk: MAJ:MIN of a whole disk, for io.max.
a_disk() {
	local dev
	dev="$(lsblk -dnro MAJ:MIN,TYPE 2>/dev/null | awk '$2 == "disk" { print $1; exit }')"
	[ -n "$dev" ] || dev="$(awk '$4 ~ /^vd[a-z]$|^sd[a-z]$/ { print $1 ":" $2; exit }' /proc/partitions)"
	echo "$dev"
}

# check_files DIR FILE=VALUE...: each cgroup file holds its value.
check_files() {
	local dir="$1" kv bad=
	shift
	for kv in "$@"; do
		[ "$(cat "$dir/${kv%%=*}")" = "${kv#*=}" ] || bad+="${kv%%=*}: '$(cat "$dir/${kv%%=*}")', want '${kv#*=}'; "
	done
	[ -z "$bad" ] || fail "$bad"
}

@test "cgroupv2: every linux.resources field lands in its v2 file as runc writes it, and update --resources changes each live" {
	local id dir dev major minor
	dev="$(a_disk)"
	[ -n "$dev" ] || skip "no block device for io.max"
	major="${dev%:*}" minor="${dev#*:}"
	[ "$(nproc)" -ge 2 ] || skip "one CPU: cpuset.cpus cannot change"
	id="$(new_id)"
	update_config --argjson ma "$major" --argjson mi "$minor" '.linux.resources = {
		"memory": {"limit": 67108864, "swap": 100663296, "reservation": 16777216},
		"cpu": {"shares": 2048, "quota": 40000, "period": 100000, "burst": 10000, "cpus": "0", "mems": "0"},
		"blockIO": {"weight": 500,
			"throttleReadBpsDevice": [{"major": $ma, "minor": $mi, "rate": 2097152}],
			"throttleWriteBpsDevice": [{"major": $ma, "minor": $mi, "rate": 1048576}],
			"throttleReadIOPSDevice": [{"major": $ma, "minor": $mi, "rate": 200}],
			"throttleWriteIOPSDevice": [{"major": $ma, "minor": $mi, "rate": 100}]},
		"pids": {"limit": 40},
		"hugepageLimits": [{"pageSize": "2MB", "limit": 4194304}],
		"unified": {"memory.high": "58720256", "memory.swap.high": "20971520"}}'
	set_args sleep 1000
	run_bg "$id"
	dir="$(cgdir "$id")"
	# swap: v2 counts swap alone (96M - 64M); shares 2048 -> weight 174 and
	# blkio weight 500 -> io.weight 4950 (the library's conversions, as
	# runc's).
	check_files "$dir" memory.max=67108864 memory.swap.max=33554432 memory.low=16777216 memory.high=58720256 \
		cpu.weight=174 "cpu.max=40000 100000" cpu.max.burst=10000 cpuset.cpus=0 cpuset.mems=0 \
		"io.weight=default 4950" "io.max=$dev rbps=2097152 wbps=1048576 riops=200 wiops=100" \
		pids.max=40 hugetlb.2MB.max=4194304 memory.swap.high=20971520
	husk update --resources - "$id" <<<"{
		\"memory\": {\"limit\": 100663296, \"swap\": 150994944, \"reservation\": 33554432},
		\"cpu\": {\"shares\": 512, \"quota\": 60000, \"period\": 200000, \"burst\": 20000, \"cpus\": \"1\", \"mems\": \"0\"},
		\"blockIO\": {\"weight\": 100, \"throttleReadBpsDevice\": [{\"major\": $major, \"minor\": $minor, \"rate\": 4194304}]},
		\"pids\": {\"limit\": 50},
		\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 8388608}],
		\"unified\": {\"memory.high\": \"94371840\", \"memory.swap.high\": \"max\"}}" || fail "update --resources failed"
	check_files "$dir" memory.max=100663296 memory.swap.max=50331648 memory.low=33554432 memory.high=94371840 \
		cpu.weight=59 "cpu.max=60000 200000" cpu.max.burst=20000 cpuset.cpus=1 cpuset.mems=0 \
		"io.weight=default 910" "io.max=$dev rbps=4194304 wbps=1048576 riops=200 wiops=100" \
		pids.max=50 hugetlb.2MB.max=8388608 memory.swap.high=max
	# The container sees its new limits through its own cgroup view.
	run -0 husk exec "$id" cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/cpuset.cpus
	[ "$output" = "$(printf '100663296\n1')" ] || fail "inside: $output"
}

@test "cgroupv2: cpu.idle 1 with cpu.shares runs, and update turns cpu.idle back to 0 with the weight from the shares" {
	local id dir
	id="$(new_id)"
	update_config '.linux.resources.cpu = {"idle": 1, "shares": 512}'
	set_args sleep 1000
	run_bg "$id"
	dir="$(cgdir "$id")"
	check_files "$dir" cpu.idle=1
	run -0 husk update --cpu-idle 0 "$id"
	check_files "$dir" cpu.idle=0 cpu.weight=59
	run -0 husk update --cpu-idle 1 "$id"
	check_files "$dir" cpu.idle=1
}

@test "cgroupv2: rdma for a device the host lacks, misc with no capacity, weightDevice without BFQ: refused naming the field, nothing left" {
	refused_each 'rdma = {"husk_nodev0": {"hcaHandles": 10}}|rdma' \
		'unified = {"misc.max": "husk_nores 1"}|unified["misc.max"]' \
		'blockIO = {"weightDevice": [{"major": 254, "minor": 0, "weight": 300}]}|blockIO.weightDevice'
}
