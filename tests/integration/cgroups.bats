#!/usr/bin/env bats
# Cgroups that really limit: memory (OOM), pids, cpu, devices, hugetlb;
# pause/resume, update, events, ps, kill --all; placement and clean-up.

load helpers

# vm_covered prints the tests/vm/suites/cgroupv2.bats test that proves the
# same thing on v2 as the running test, when there is one: in the VM lane
# (TCG makes each test 10-30 s long) those run, and these skip.
vm_covered() {
	case "$BATS_TEST_DESCRIPTION" in
	"cgroups: a pids limit of 20 stops"*) echo "pids.max is enforced" ;;
	"cgroups: an explicit allow rule"*) echo "a block device allowed by the spec opens" ;;
	"cgroups: update changes memory and pids limits"*) echo "update changes memory, pids and cpu" ;;
	"cgroups: pause freezes the container"* | "cgroups: a paused container can be killed"*) echo "pause sets cgroup.freeze" ;;
	"cgroups: kill --all signals every process"*) echo "kill --all empties the cgroup" ;;
	"cgroups: husk killed at any point of create"*) echo "husk killed at random points of create" ;;
	"cgroups: 200 create/start/kill/delete cycles"*) echo "100 run/delete cycles leave none" ;;
	"cgroups: exec into a container whose pids.max"*) echo "exec into a container whose pids.max leaves a few pids" ;;
	esac
}

setup() {
	[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup"
	# Skips known before the bundle is built (seconds each under TCG).
	if [ -n "${HUSK_VM_SETUP:-}" ] && [ -z "${HUSK_VM_ALL:-}" ] && [ -n "$(vm_covered)" ]; then
		skip "in the VM lane cgroupv2.bats covers this: \"cgroupv2: $(vm_covered) ...\" (VM_ENV=HUSK_VM_ALL=1 runs it)"
	fi
	if cgv2; then
		case "$BATS_TEST_DESCRIPTION" in
		"cgroups: a limit the host cannot honour"*) skip "cgroup v2: every controller is in the one hierarchy (cgroupv2.bats refuses the v1-only fields)" ;;
		"cgroups: memory.kernelTCP is written"*) skip "cgroup v2 has no kernel TCP limit" ;;
		esac
	fi
	setup_husk
	# runc's spec has these; husk spec does not (yet): a cgroup namespace
	# and the cgroup mount, so the container sees its own cgroups at /.
	set_ns cgroup
	update_config 'if any(.mounts[]; .destination == "/sys/fs/cgroup") then . else .mounts += [{"destination": "/sys/fs/cgroup",
		"type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}] end'
	update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"}]'
}

# cgv2: the host's cgroups are the pure unified hierarchy.
cgv2() {
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]
}

# host_cgroup_dir ID CONTROLLER prints the container's directory of a v1
# controller (or the unified one for "") from its recorded state.
host_cgroup_dir() {
	jq -r --arg c "$2" '.cgroup_paths[$c] // empty' "$HUSK_ROOT/$1/state.json"
}

# wait_for_file FILE PATTERN [SECONDS]: FILE gets a line matching PATTERN.
wait_for_file() {
	local f="$1" pat="$2" secs="${3:-10}" i
	for ((i = 0; i < secs * 20; i++)); do
		grep -qE -- "$pat" "$f" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no line matching '$pat' in $f after ${secs}s: $(cat "$f" 2>/dev/null)"
}

# go_file: the host creates /tmp/go in the (read-only) rootfs; container
# scripts wait for it.
go_file() {
	touch "$BUNDLE/rootfs/tmp/go"
}

@test "cgroups: a 32 MiB memory limit OOM-kills a 64 MiB toucher and events reports the oom" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.memory = {"limit": 33554432, "swap": 33554432}'
	# One process that doubles a string to 64 MiB: the OOM killer's only
	# candidate (a head | tail pair sometimes stalled for over 10 s).
	set_args sh -c 'while [ ! -e /tmp/go ]; do sleep 0.05; done
		awk "BEGIN { s = \"x\"; while (length(s) < 67108864) s = s s }"; echo "toucher status $?"; sleep 100'
	run_bg "$id"
	husk events --interval 1s "$id" >"$TEST_DIR/events" 2>"$TEST_DIR/events.err" </dev/null 3>&- &
	track_bg $!
	wait_for_file "$TEST_DIR/events" '"type":"stats"'
	go_file
	wait_for_file "$TEST_DIR/$id.out" 'toucher status'
	grep -qx 'toucher status 137' "$TEST_DIR/$id.out" || fail "toucher not killed: $(cat "$TEST_DIR/$id.out")"
	wait_for_file "$TEST_DIR/events" '"type":"oom"'
	# -R and fromjson?: the last line may still be half written. All lines
	# in one array: jq 1.6's -e looks at the last line's result only, and
	# a stats line may follow the oom one.
	jq -R -n -e --arg id "$id" '[inputs | fromjson? | select(.type == "oom")] | any(.[]; .id == $id)' "$TEST_DIR/events" >/dev/null ||
		fail "oom event: $(cat "$TEST_DIR/events")"
	# The container itself lives on: only the toucher was killed.
	[ "$(container_status "$id")" = running ]
}

@test "cgroups: a pids limit of 20 stops a fork loop at 20" {
	local id n dir
	id="$(new_id)"
	update_config '.linux.resources.pids = {"limit": 20}'
	# busybox sh exits when a fork fails: the loop runs in a subshell, so
	# at the failure there are 20 processes (init, the loop, 18 sleeps) and
	# 19 once the loop has gone.
	set_args sh -c '(while :; do sleep 100 & done) 2>"/dev/null"; echo forked; exec sleep 1000'
	run_bg "$id"
	wait_for_file "$TEST_DIR/$id.out" forked
	run -0 husk ps --format json "$id"
	n="$(jq length <<<"$output")"
	[ "$n" -eq 19 ] || fail "$n processes after the loop, want 19: $output"
	run -0 husk events --stats "$id"
	[ "$(jq .data.pids.limit <<<"$output")" -eq 20 ] || fail "pids stats: $output"
	dir="$(host_cgroup_dir "$id" pids)"
	[ -n "$dir" ] || dir="$(host_cgroup_dir "$id" "")"
	grep -qE '^max [1-9]' "$dir/pids.events" || fail "pids.events: $(cat "$dir/pids.events")"
}

@test "cgroups: a cpu quota shows in the container's own cgroup files, at / of its cgroup namespace" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.cpu = {"quota": 50000, "period": 100000, "shares": 512}'
	set_args sh -c 'if [ -e /sys/fs/cgroup/cpu.max ]; then cat /sys/fs/cgroup/cpu.max
		else echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; fi
		grep -v ":/$" /proc/self/cgroup || echo all-at-root'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "${lines[0]}" = "50000 100000" ] || fail "cpu files: $output"
	[ "${lines[1]}" = all-at-root ] || fail "/proc/self/cgroup inside: $output"
}

# mknod_probe: a script making a block and a char node and opening them,
# after checking the default devices.
mknod_probe() {
	set_args sh -c 'echo x >/dev/null && echo null-ok
		[ "$(head -c 4 /dev/zero | wc -c)" = 4 ] && echo zero-ok
		[ "$(head -c 4 /dev/urandom | wc -c)" = 4 ] && echo urandom-ok
		mknod /dev/blk b '"$1"' && echo mknod-ok
		(exec 3</dev/blk) 2>/dev/null && echo blk-open || echo blk-denied
		mknod /dev/kmsg2 c 1 11 && ((exec 3</dev/kmsg2) 2>/dev/null && echo char-open || echo char-denied)'
	update_config '.process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"]
		| .process.capabilities.permitted += ["CAP_MKNOD"]'
}

# a_block_device prints MAJ MIN of a host block device the host itself
# may open (some sandboxes deny their disks even to root).
a_block_device() {
	local d
	for d in /dev/loop0 /dev/zram0 /dev/ram0 /dev/*; do
		[ -b "$d" ] || continue
		(exec 3<"$d") 2>/dev/null || continue
		printf '%d %d\n' "0x$(stat -c %t "$d")" "0x$(stat -c %T "$d")"
		return 0
	done
}

@test "cgroups: default device rules deny a mknod'ed block device; /dev/null, /dev/zero, /dev/urandom work" {
	local id dev
	id="$(new_id)"
	dev="$(a_block_device)"
	[ -n "$dev" ] || skip "no block device on this host"
	mknod_probe "$dev"
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "$(printf '%s\n' null-ok zero-ok urandom-ok mknod-ok blk-denied char-denied)" ] ||
		fail "output: $output"
}

@test "cgroups: an explicit allow rule in linux.resources.devices makes a listed device usable" {
	local id dev major minor
	id="$(new_id)"
	dev="$(a_block_device)"
	[ -n "$dev" ] || skip "no block device on this host"
	read -r major minor <<<"$dev"
	mknod_probe "$dev"
	update_config --argjson ma "$major" --argjson mi "$minor" \
		'.linux.devices += [{"path": "/dev/listed", "type": "b", "major": $ma, "minor": $mi, "fileMode": 384}]
		| .linux.resources.devices += [{"allow": true, "type": "b", "major": $ma, "minor": $mi, "access": "r"}]'
	set_args sh -c '(exec 3</dev/listed) && echo listed-open; mknod /dev/blk b '"$dev"' && (exec 3</dev/blk) && echo blk-open
		(exec 3<>/dev/listed) 2>/dev/null && echo listed-rw || echo listed-rw-denied'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "$(printf '%s\n' listed-open blk-open listed-rw-denied)" ] || fail "output: $output"
}

# device_order_bundle ORDER: a runc spec bundle whose linux.devices has
# /dev/fuse (c 10:229) and whose linux.resources.devices, after runc's
# deny-all, allow it rwm then deny its w ("allow-deny"), or the other way
# round ("deny-allow"). The process says whether each of a read and a
# write open is refused by the device rules (EPERM); an allowed open may
# still fail in the driver (no fuse module): that is not a refusal.
device_order_bundle() {
	runc_spec_config
	local rules='[{"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rwm"},
		{"allow": false, "type": "c", "major": 10, "minor": 229, "access": "w"}]'
	[ "$1" = allow-deny ] || rules="$(jq 'reverse' <<<"$rules")"
	update_config --argjson r "$rules" '.process.terminal = false
		| .linux.devices += [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}]
		| .linux.resources.devices += $r'
	set_args sh -c 'for m in "<" ">"; do
		if sh -c "exec 3$m/dev/fuse" 2>&1 | grep -q "not permitted"; then echo "$m denied"; else echo "$m allowed"; fi
	done'
}

@test "cgroups: device rules apply in the listed order: a later rule overrides an earlier one (runc spec bundle)" {
	local id
	id="$(new_id)"
	device_order_bundle allow-deny
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "$(printf '< allowed\n> denied')" ] || fail "allow rwm, then deny w: $output"
	id="$(new_id)"
	device_order_bundle deny-allow
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "$(printf '< allowed\n> allowed')" ] || fail "deny w, then allow rwm: $output"
}

@test "cgroups: v1 devices.list is the rules in the listed order, runc's defaults after them (runc spec bundle)" {
	cgv2 && skip "cgroup v2 has no devices.list (the eBPF program's order is tested above)"
	local id dir
	id="$(new_id)"
	device_order_bundle allow-deny
	set_args sleep 1000
	run_bg "$id"
	dir="$(host_cgroup_dir "$id" devices)"
	[ -n "$dir" ] || fail "no devices cgroup recorded"
	run -0 cat "$dir/devices.list"
	[ "$output" = "$(printf '%s\n' 'c 10:229 rm' 'c *:* m' 'b *:* m' 'c 1:3 rwm' 'c 1:8 rwm' 'c 1:7 rwm' \
		'c 5:0 rwm' 'c 1:5 rwm' 'c 1:9 rwm' 'c 136:* rwm' 'c 5:2 rwm' 'c 10:200 rwm')" ] || fail "devices.list: $output"
	husk delete --force "$id"
}

@test "cgroups: update writes only what changes: cpu.idle 1 again, a weight while idle (runc spec bundle)" {
	runc_spec_config
	update_config '.process.terminal = false | .linux.resources.cpu = {"idle": 1, "shares": 512}'
	set_args sleep 1000
	local id dir weight=cpu.shares want=256
	id="$(new_id)"
	run_bg "$id"
	dir="$(host_cgroup_dir "$id" cpu)"
	if cgv2; then
		dir="$(host_cgroup_dir "$id" "")" weight=cpu.weight want=35 # 256 shares on v2's scale
	fi
	[ -e "$dir/cpu.idle" ] || skip "this kernel has no cpu.idle"
	[ "$(cat "$dir/cpu.idle")" = 1 ] || fail "cpu.idle at create: $(cat "$dir/cpu.idle")"
	# Already idle: nothing to write (the saved cpu.shares would be refused).
	run -0 --separate-stderr husk update --cpu-idle 1 "$id"
	# A new weight while idle: saved, written when the group leaves idle.
	run -0 --separate-stderr husk update --cpu-share 256 "$id"
	[ "$(cat "$dir/cpu.idle")" = 1 ] || fail "cpu.idle after the updates: $(cat "$dir/cpu.idle")"
	run -0 --separate-stderr husk update --cpu-idle 0 "$id"
	[ "$(cat "$dir/cpu.idle")" = 0 ] || fail "cpu.idle: $(cat "$dir/cpu.idle")"
	[ "$(cat "$dir/$weight")" = "$want" ] || fail "$weight after leaving idle: $(cat "$dir/$weight")"
	husk delete --force "$id"
}

@test "cgroups: update changes memory and pids limits of a running container, visible inside" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.memory = {"limit": 33554432} | .linux.resources.pids = {"limit": 20}'
	set_args sh -c 'show() { if [ -e /sys/fs/cgroup/memory.max ]; then
			echo "$1 $(cat /sys/fs/cgroup/memory.max) $(cat /sys/fs/cgroup/pids.max)"
		else echo "$1 $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes) $(cat /sys/fs/cgroup/pids/pids.max)"; fi; }
		show before; while [ ! -e /tmp/go ]; do sleep 0.05; done; show after; sleep 100'
	run_bg "$id"
	wait_for_file "$TEST_DIR/$id.out" '^before'
	grep -qx "before 33554432 20" "$TEST_DIR/$id.out" || fail "before: $(cat "$TEST_DIR/$id.out")"
	run -0 husk update --memory 64m --pids-limit 30 "$id"
	go_file
	wait_for_file "$TEST_DIR/$id.out" '^after'
	grep -qx "after 67108864 30" "$TEST_DIR/$id.out" || fail "after: $(cat "$TEST_DIR/$id.out")"
	# Recorded too: a second update changes only what it names.
	run -0 husk update --pids-limit 40 "$id"
	run -0 husk events --stats "$id"
	[ "$(jq .data.memory.usage.limit <<<"$output")" = 67108864 ] || fail "stats: $output"
	[ "$(jq .data.pids.limit <<<"$output")" = 40 ] || fail "stats: $output"
}

@test "cgroups: update --resources takes linux.resources JSON from stdin; bad values name the field" {
	local id
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	run -0 husk update --resources - "$id" <<<'{"pids": {"limit": 11}, "memory": {"limit": 50331648}}'
	run -0 husk events --stats "$id"
	[ "$(jq .data.pids.limit <<<"$output")" = 11 ] || fail "stats: $output"
	[ "$(jq .data.memory.usage.limit <<<"$output")" = 50331648 ] || fail "stats: $output"
	run ! --separate-stderr husk update --cpu-quota 10 "$id"
	assert_contains "$stderr" "linux.resources.cpu.quota" 10
	run ! --separate-stderr husk update --memory lots "$id"
	assert_contains "$stderr" "--memory" lots
}

@test "cgroups: pause freezes the container, resume thaws it" {
	local id n1 n2
	id="$(new_id)"
	set_args sh -c 'while :; do echo tick; sleep 0.02; done'
	run_bg "$id"
	wait_for_file "$TEST_DIR/$id.out" tick
	run -0 husk pause "$id"
	[ "$(container_status "$id")" = paused ]
	run ! husk pause "$id"
	n1="$(wc -l <"$TEST_DIR/$id.out")"
	sleep 0.5
	n2="$(wc -l <"$TEST_DIR/$id.out")"
	[ "$n1" -eq "$n2" ] || fail "made progress while paused: $n1 -> $n2 lines"
	run -0 husk resume "$id"
	[ "$(container_status "$id")" = running ]
	run ! husk resume "$id"
	sleep 0.3
	n2="$(wc -l <"$TEST_DIR/$id.out")"
	[ "$n2" -gt "$n1" ] || fail "no progress after resume: $n1 -> $n2 lines"
}

@test "cgroups: a paused container can be killed and deleted" {
	local id pid
	id="$(new_id)"
	set_args sleep 100
	run_bg "$id"
	pid="$(container_pid "$id")"
	run -0 husk pause "$id"
	run -0 husk delete --force "$id"
	assert_pid_gone "$pid"
	assert_no_container "$id"
}

@test "cgroups: events --stats prints runc's JSON with memory usage > 0" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.memory = {"limit": 67108864}'
	set_args sleep 100
	run_bg "$id"
	run -0 husk events --stats "$id"
	jq -e --arg id "$id" '.type == "stats" and .id == $id' <<<"$output" >/dev/null || fail "event: $output"
	jq -e '.data.memory.usage.usage > 0 and .data.memory.usage.limit == 67108864' <<<"$output" >/dev/null ||
		fail "memory: $output"
	jq -e '(.data.cpu | has("usage")) and (.data.pids.current >= 1) and (.data | has("blkio") and has("hugetlb"))' \
		<<<"$output" >/dev/null || fail "shape: $output"
}

@test "cgroups: events streams stats every interval and ends when the container stops" {
	local id
	id="$(new_id)"
	set_args sh -c 'sleep 1; exit 0'
	run_bg "$id"
	run -0 husk events --interval 200ms "$id"
	[ "$(jq -s 'map(select(.type == "stats")) | length' <<<"$output")" -ge 2 ] || fail "events: $output"
}

@test "cgroups: ps lists the container's processes, as json and as a ps table" {
	local id pid
	id="$(new_id)"
	set_args sh -c 'sleep 100 & sleep 101 & wait'
	run_bg "$id"
	pid="$(container_pid "$id")"
	for _ in $(seq 50); do
		run -0 husk ps --format json "$id"
		[ "$(jq length <<<"$output")" -eq 3 ] && break
		sleep 0.05
	done
	[ "$(jq length <<<"$output")" -eq 3 ] || fail "ps json: $output"
	jq -e --argjson p "$pid" 'index($p) != null' <<<"$output" >/dev/null || fail "init $pid not in $output"
	run -0 husk ps "$id"
	[[ "${lines[0]}" == *PID* ]] || fail "no header: $output"
	[ "${#lines[@]}" -eq 4 ] || fail "ps table: $output"
	assert_contains "$output" "sleep 100" "sleep 101"
	# Arguments after the id go to ps.
	run -0 husk ps "$id" -o pid,args
	[ "${lines[0]}" = "    PID COMMAND" ] || [[ "${lines[0]}" == *PID*COMMAND* ]] || fail "ps -o: $output"
}

@test "cgroups: kill --all signals every process, also ones left after init died" {
	local id
	id="$(new_id)"
	# No pid namespace: init's death does not take the others with it.
	del_ns pid
	set_args sh -c 'sleep 100 & sleep 101 & exec sleep 102'
	run_bg "$id"
	for _ in $(seq 50); do
		run -0 husk ps --format json "$id"
		[ "$(jq length <<<"$output")" -eq 3 ] && break
		sleep 0.05
	done
	# init alone dies (husk kill KILL, as runc's, would take every
	# process of a container without a pid namespace).
	kill -9 "$(container_pid "$id")"
	wait_for_status "$id" stopped
	run -0 husk ps --format json "$id"
	[ "$(jq length <<<"$output")" -eq 2 ] || fail "left after init died: $output"
	run -0 husk kill --all "$id" KILL
	for _ in $(seq 50); do
		run -0 husk ps --format json "$id"
		[ "$output" = "[]" ] && break
		sleep 0.05
	done
	[ "$output" = "[]" ] || fail "after kill --all: $output"
	run -0 husk delete "$id"
}

@test "cgroups: delete kills what is left in the cgroups and removes them" {
	local id dir pids
	id="$(new_id)"
	del_ns pid
	set_args sh -c 'sleep 100 & exec sleep 102'
	run_bg "$id"
	dir="$(host_cgroup_dir "$id" pids)"
	[ -d "$dir" ] || dir="$(host_cgroup_dir "$id" "")"
	[ -d "$dir" ] || fail "no cgroup dir recorded: $(cat "$HUSK_ROOT/$id/state.json")"
	# init alone dies (husk kill KILL would take them all, as runc's).
	kill -9 "$(container_pid "$id")"
	wait_for_status "$id" stopped
	pids="$(cat "$dir/cgroup.procs")"
	[ -n "$pids" ] || fail "nothing left in $dir"
	run -0 husk delete "$id"
	[ ! -d "$dir" ] || fail "$dir left"
	for p in $pids; do assert_pid_gone "$p"; done
}

@test "cgroups: without linux.cgroupsPath the container's cgroup is <id> next to husk's own in every hierarchy, where runc puts it; nothing is left after delete" {
	load runtimes
	older_spec
	local bin id cg own ctrl path
	for bin in $(runtimes); do
		id="$(new_id)"
		rt "$bin" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
			fail "$bin create: $(cat "$TEST_DIR/err")"
		cg="$(cat "/proc/$(rt "$bin" state "$id" | jq .pid)/cgroup")"
		run -0 rt "$bin" delete --force "$id"
		while IFS=: read -r _ ctrl path; do
			own="$(awk -F: -v c="$ctrl" '$2 == c { print $3 }' /proc/self/cgroup)"
			if [ -z "$ctrl" ] && cgv2; then own="$(dirname "$own")"; fi
			[ "$path" = "${own%/}/$id" ] || fail "$bin: $ctrl: $path, want ${own%/}/$id"
		done <<<"$cg"
		[ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$id")" ] || fail "$bin: left: $(find /sys/fs/cgroup -maxdepth 8 -type d -name "$id")"
	done
	[ -z "$(find /sys/fs/cgroup -maxdepth 2 -type d -name husk)" ] || fail "a husk parent: $(find /sys/fs/cgroup -maxdepth 2 -type d -name husk)"
}

@test "cgroups: linux.cgroupsPath absolute and relative, joined in every hierarchy" {
	local id base own
	id="$(new_id)"
	base="husk-bats-$$-$RANDOM"
	update_config --arg p "/$base/$id" '.linux.cgroupsPath = $p'
	set_args sleep 100
	run_bg "$id"
	grep -q "/$base/$id\$" "/proc/$(container_pid "$id")/cgroup" || fail "$(cat "/proc/$(container_pid "$id")/cgroup")"
	# Every line of /proc/PID/cgroup (every hierarchy) names it.
	[ -z "$(grep -v "/$base/$id\$" "/proc/$(container_pid "$id")/cgroup")" ] || fail "not in every hierarchy"
	run -0 husk delete --force "$id"
	[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -path "*/$base/$id")" ] || fail "left"
	find /sys/fs/cgroup -maxdepth 3 -depth -type d -name "$base" -exec rmdir {} \; 2>/dev/null || true

	id="$(new_id)"
	update_config --arg p "$base/$id" '.linux.cgroupsPath = $p'
	run_bg "$id"
	# Relative to husk's own cgroup, hierarchy by hierarchy.
	while IFS=: read -r _ ctrl path; do
		own="$(awk -F: -v c="$ctrl" '$2 == c { print $3 }' /proc/self/cgroup)"
		if [ -z "$ctrl" ] && cgv2; then own="$(dirname "$own")"; fi
		[ "$path" = "${own%/}/$base/$id" ] || fail "$ctrl: $path, want ${own%/}/$base/$id"
	done <"/proc/$(container_pid "$id")/cgroup"
	run -0 husk delete --force "$id"
	find /sys/fs/cgroup -maxdepth 8 -depth -type d -name "$base" -exec rmdir {} \; 2>/dev/null || true
}

@test "cgroups: a systemd slice:prefix:name path: a clear error with --systemd-cgroup and no systemd; without the flag a relative path, as runc takes it" {
	local id dir
	id="$(new_id)"
	[ ! -d /run/systemd/system ] || skip "systemd runs here (tests/vm/suites/systemd.bats covers the driver)"
	update_config --arg p "system.slice:husk:$id" '.linux.cgroupsPath = $p'
	run ! --separate-stderr husk --systemd-cgroup create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "--systemd-cgroup" "systemd"
	assert_no_container "$id"
	# runc's cgroupfs driver takes the string as one directory relative to
	# its own cgroup; husk does the same and warns about the mismatch.
	create_bg "$id" || fail "create with a slice-form cgroupsPath and no --systemd-cgroup failed"
	assert_contains "$(cat "$TEST_DIR/$id.err")" "linux.cgroupsPath" "system.slice:husk:$id" "cgroupfs"
	# The memory hierarchy's, on v1 or hybrid; the one tree on pure v2.
	local top=/sys/fs/cgroup/memory
	[ -d "$top" ] || top=/sys/fs/cgroup
	dir="$(find "$top/" -maxdepth 3 -type d -name "system.slice:husk:$id" | head -1)"
	[ -n "$dir" ] || fail "no memory cgroup named system.slice:husk:$id under $top"
	grep -qx "$(cat "$TEST_DIR/$id.pid")" "$dir/cgroup.procs" || fail "init is not in $dir"
	husk delete --force "$id"
	[ ! -d "$dir" ] || fail "$dir left after delete"
	assert_no_container "$id"
}

@test "cgroups: a limit the host cannot honour is refused, naming the field and the value" {
	local id
	id="$(new_id)"
	[ ! -d /sys/fs/cgroup/net_cls ] && ! cgv2 || skip "this host has net_cls, or is v2"
	update_config '.linux.resources.network = {"classID": 1048577}'
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "linux.resources.network.classID" 1048577 net_cls
	assert_no_container "$id"

	update_config 'del(.linux.resources.network) | .linux.resources.unified = {"memory.max": "1G"}'
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" 'linux.resources.unified["memory.max"]'
	assert_no_container "$id"

	update_config 'del(.linux.resources.unified) | .linux.resources.cpu = {"cpus": "63"}'
	run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "linux.resources.cpu.cpus" 63
	assert_no_container "$id"
}

@test "cgroups: hugepage limits land where the hugetlb controller is (unified on a hybrid host)" {
	local id dir file
	id="$(new_id)"
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages"
	update_config '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
	set_args sleep 100
	run_bg "$id"
	if [ -n "$(host_cgroup_dir "$id" hugetlb)" ]; then
		file="$(host_cgroup_dir "$id" hugetlb)/hugetlb.2MB.limit_in_bytes"
	else
		file="$(host_cgroup_dir "$id" "")/hugetlb.2MB.max"
	fi
	[ "$(cat "$file")" = 4194304 ] || fail "$file: $(cat "$file")"
	run -0 husk events --stats "$id"
	jq -e '.data.hugetlb | has("2MB")' <<<"$output" >/dev/null || fail "stats: $output"
}

@test "cgroups: husk killed at any point of create leaves nothing delete --force cannot remove" {
	local id i pid
	set_args sleep 100
	for i in $(seq 0 12); do
		id="$(new_id)"
		"$HUSK_BIN" --root "$HUSK_ROOT" create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- &
		pid=$!
		sleep "0.0$((i % 10))$((i * 7 % 10))"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		husk delete --force "$id" || fail "delete --force $id after kill -9 at step $i"
		[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "$id")" ] || fail "cgroups of $id left (step $i)"
	done
}

# 200 on the host; fewer in the VM lane, where TCG makes each cycle a
# second long (tests/vm/suites/cgroupv2.bats runs its own 100).
@test "cgroups: 200 create/start/kill/delete cycles leave no cgroup of husk's" {
	local base i id
	base="$(new_id)"
	set_args sleep 100
	for i in $(seq "${HUSK_CGROUP_CYCLES:-$([ -n "${HUSK_VM_SETUP:-}" ] && echo 20 || echo 200)}"); do
		id="$base-$i"
		husk create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" 3>&- ||
			fail "create $i: $(cat "$TEST_DIR/err")"
		husk start "$id" || fail "start $i"
		husk kill "$id" KILL || fail "kill $i"
		husk delete --force "$id" || fail "delete $i"
	done
	local left
	left="$(find /sys/fs/cgroup -maxdepth 6 -type d -name "$base-*")"
	[ -z "$left" ] || fail "cgroups left: $left"
	run -0 husk list -q
	[ -z "$output" ] || fail "containers left: $output"
}

@test "cgroups: device rule access strings runc accepts, such as rwa and wr, are accepted" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwa"},
		{"allow": true, "type": "c", "major": 1, "minor": 5, "access": "wr"}]'
	set_args sh -c 'echo x >/dev/null && head -c 2 /dev/zero | wc -c'
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = 2 ] || fail "output: $output"
	assert_contains "$stderr" 'linux.resources.devices[1].access' rwa ignored
	# A string naming no access at all is still refused.
	update_config '.linux.resources.devices[1].access = "xyz"'
	run ! --separate-stderr husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	assert_contains "$stderr" 'linux.resources.devices[1].access' '"xyz"'
}

# in_container_file CTRL V1FILE V2FILE: a script printing the file inside the container (with
# its cgroup namespace and mount) that holds a setting on this host.
# Shell builtins only: it also runs under pids.max 1.
in_container_file() {
	echo 'f=/sys/fs/cgroup/'"$1/$2"'; [ -e /sys/fs/cgroup/'"$3"' ] && f=/sys/fs/cgroup/'"$3"'; read -r v <"$f"; echo "$v"'
}

@test "cgroups: pids.limit 0 means 1, as runc: the container runs with pids.max 1" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.pids = {"limit": 0}'
	set_args sh -c "$(in_container_file pids pids.max pids.max)"
	run -0 --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = 1 ] || fail "pids.max: $output; stderr: $stderr"
}

@test "cgroups: a cgroup that already holds processes is refused: container's cgroup is not empty" {
	local id base dir pid
	id="$(new_id)"
	base="husk-bats-busy-$$-$RANDOM"
	if cgv2; then dir="/sys/fs/cgroup/$base"; else dir="/sys/fs/cgroup/pids/$base"; fi
	mkdir "$dir"
	sleep 1000 &
	pid=$!
	track_bg "$pid"
	echo "$pid" >"$dir/cgroup.procs"
	update_config --arg p "/$base" '.linux.cgroupsPath = $p'
	set_args true
	run ! --separate-stderr husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$stderr" "container's cgroup is not empty" "$base"
	assert_no_container "$id"
	# The process that was there is left alone.
	pid_alive "$pid" || fail "husk killed the cgroup's own process $pid"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	find /sys/fs/cgroup -maxdepth 2 -depth -type d -name "$base" -exec rmdir {} \;
}

@test "cgroups: a cgroup that is already frozen is refused: container's cgroup unexpectedly frozen" {
	local id base dir
	id="$(new_id)"
	base="husk-bats-frozen-$$-$RANDOM"
	if cgv2; then
		dir="/sys/fs/cgroup/$base"
		mkdir "$dir"
		echo 1 >"$dir/cgroup.freeze"
	else
		dir="/sys/fs/cgroup/freezer/$base"
		mkdir "$dir"
		echo FROZEN >"$dir/freezer.state"
	fi
	update_config --arg p "/$base" '.linux.cgroupsPath = $p'
	set_args true
	run ! --separate-stderr timeout -k 5 20 "$HUSK_BIN" --root "$HUSK_ROOT" run --bundle "$BUNDLE" "$id" </dev/null
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		echo THAWED >"$dir/freezer.state" 2>/dev/null || echo 0 >"$dir/cgroup.freeze"
		fail "husk run hung on a frozen cgroup"
	fi
	assert_contains "$stderr" "container's cgroup unexpectedly frozen" "$base"
	assert_no_container "$id"
	[ -d "$dir" ] || fail "husk removed a cgroup it did not make"
	find /sys/fs/cgroup -maxdepth 2 -depth -type d -name "$base" -exec rmdir {} \;
}

@test "cgroups: update --memory -1 after a swap limit is accepted, as runc" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.memory = {"limit": 33554432, "swap": 67108864}'
	set_args sleep 100
	run_bg "$id"
	if [ -n "$(host_cgroup_dir "$id" memory)" ] && [ ! -e "$(host_cgroup_dir "$id" memory)/memory.memsw.limit_in_bytes" ]; then
		skip "this kernel has no swap accounting (memory.memsw.limit_in_bytes)"
	fi
	run -0 --separate-stderr husk update --memory -1 "$id"
	run -0 husk events --stats "$id"
	jq -e '.data.memory.usage.limit > 1000000000000' <<<"$output" >/dev/null || fail "memory limit after -1: $output"
	run -0 husk update --memory 33554432 --memory-swap 67108864 "$id"
	run -0 husk events --stats "$id"
	[ "$(jq .data.memory.usage.limit <<<"$output")" = 33554432 ] || fail "stats: $output"
}

@test "cgroups: update turns cpu.idle from 1 back to 0" {
	local id
	id="$(new_id)"
	update_config '.linux.resources.cpu = {"idle": 1, "shares": 512}'
	set_args sh -c "while [ ! -e /tmp/go ]; do sleep 0.05; done; $(in_container_file cpu cpu.idle cpu.idle)"
	run_bg "$id"
	run -0 --separate-stderr husk update --cpu-idle 0 "$id"
	go_file
	wait_for_file "$TEST_DIR/$id.out" '^[01]$'
	[ "$(cat "$TEST_DIR/$id.out")" = 0 ] || fail "cpu.idle inside: $(cat "$TEST_DIR/$id.out")"
}

@test "cgroups: memory.kernelTCP is written to memory.kmem.tcp.limit_in_bytes where the kernel has it" {
	local id dir
	id="$(new_id)"
	cgv2 && skip "cgroup v2 has no kernel TCP limit"
	[ -e /sys/fs/cgroup/memory/memory.kmem.tcp.limit_in_bytes ] || skip "no memory.kmem.tcp.limit_in_bytes on this kernel"
	update_config '.linux.resources.memory = {"kernelTCP": 2097152}'
	set_args sleep 100
	create_bg "$id"
	! grep -q kernelTCP "$TEST_DIR/$id.err" || fail "warned: $(cat "$TEST_DIR/$id.err")"
	dir="$(host_cgroup_dir "$id" memory)"
	[ "$(cat "$dir/memory.kmem.tcp.limit_in_bytes")" = 2097152 ] || fail "$(cat "$dir/memory.kmem.tcp.limit_in_bytes")"
	run -0 husk delete --force "$id"
}

@test "cgroups: exec into a container whose pids.max leaves a few pids works or fails with one line naming pids.max" {
	local id n
	id="$(new_id)"
	update_config '.linux.resources.pids = {"limit": 3}'
	set_args sleep 1000
	run_bg "$id"
	for n in 3 4 5 6 7 8 9 10 12 16; do
		run -0 husk update --pids-limit "$n" "$id"
		run --separate-stderr husk exec "$id" true
		if [ "$status" -eq 0 ]; then
			continue
		fi
		[ "${#stderr}" -lt 400 ] && [ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "pids.max $n: not one line: $stderr"
		assert_contains "$stderr" "pids.max"
		[[ "$stderr" != *goroutine* && "$stderr" != *pthread_create* ]] || fail "pids.max $n: Go crash: $stderr"
	done
	# With room enough it works.
	run -0 husk exec "$id" true
}

@test "cgroups: cpu.realtimeRuntime/realtimePeriod work with the default cgroup path on v1, as runc" {
	cgv2 && skip "cgroup v2: no real-time group budget (cpu.rt_runtime_us is v1 only)"
	[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] ||
		skip "no /sys/fs/cgroup/cpu/cpu.rt_runtime_us: a kernel without RT_GROUP_SCHED (or no v1 cpu hierarchy)"
	load runtimes
	older_spec
	update_config '.linux.resources.cpu = {"realtimeRuntime": 10000, "realtimePeriod": 100000}'
	set_args sh -c 'cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us /sys/fs/cgroup/cpu/cpu.rt_period_us'
	local bin id
	for bin in $(runtimes); do
		id="$(new_id)"
		run -0 rt "$bin" run --bundle "$BUNDLE" "$id" </dev/null
		[ "${lines[0]}" = 10000 ] && [ "${lines[1]}" = 100000 ] || fail "$bin: rt runtime, period: $output"
	done
}
