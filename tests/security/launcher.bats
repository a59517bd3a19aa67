#!/usr/bin/env bats
# The launcher: the one code path that sets a container's process up
# (docs/architecture.md, "One launcher"), attacked as issue 26 found it
# open at b947039: ids that wrap to root, exec plans whose lengths wrap, a
# privileged helper a container could ptrace, the host's husk binary run
# as an interpreter, a seccomp filter that kills the launcher.

load helpers

# scanner_config: the container's process may ptrace (CAP_SYS_PTRACE in
# every set), has no_new_privs and a seccomp filter.
scanner_config() {
	cp "$(static_tool pid-scanner)" "$BUNDLE/rootfs/bin/pid-scanner" || fail "cannot build pid-scanner"
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])
		| .process.noNewPrivileges = true
		| .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"}]}'
}

# scanner_done OUT: the scanner's summary in OUT says it attached to
# something and saw no violation.
scanner_done() {
	local out
	out="$(cat "$1")"
	echo "# ${out##*$'\n'}" >&3
	grep -q "^pids seen .*, violations 0$" <<<"$out" || fail "the scanner: $out"
	grep -q "attached [1-9]" <<<"$out" || fail "the scanner attached to nothing: $out"
}

@test "finding 1: uid or gid 4294967295 is refused in config.json, exec --user, --additional-gids and --process, with and without a user namespace" {
	local id userns
	for userns in no yes; do
		if [ "$userns" = yes ]; then
			requires_userns
			set_ns user
			update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
				| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
		fi
		for field in uid gid; do
			cp "$BUNDLE/config.json" "$TEST_DIR/config.keep"
			update_config --arg f "$field" '.process.user[$f] = 4294967295'
			set_args id
			id="$(new_id)"
			run ! husk run --bundle "$BUNDLE" "$id" </dev/null
			assert_contains "$output" "process.user.$field: 4294967295: uids and gids must be in range 0-2147483647"
			[[ "$output" != *"uid=0"* ]] || fail "ran as root: $output"
			assert_no_container "$id"
			cp "$TEST_DIR/config.keep" "$BUNDLE/config.json"
		done
		update_config '.process.user.additionalGids = [5, 4294967295]'
		run ! husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
		assert_contains "$output" "process.user.additionalGids[1]: 4294967295: uids and gids must be in range"
		update_config '.process.user.additionalGids = []'

		set_args sleep 1000
		id="$(new_id)"
		run_bg "$id"
		run ! husk exec --user 4294967295:4294967295 "$id" id
		assert_contains "$output" "uid 4294967295: uids and gids must be in range 0-2147483647"
		run ! husk exec --user 0:4294967296 "$id" id
		assert_contains "$output" "gid 4294967296: uids and gids must be in range 0-2147483647"
		run ! husk exec --additional-gids 4294967295 "$id" id
		assert_contains "$output" "--additional-gids: 4294967295: uids and gids must be in range"
		jq '.process | .args = ["id"] | .user.uid = 4294967295' "$BUNDLE/config.json" >"$TEST_DIR/p.json"
		run ! husk exec --process "$TEST_DIR/p.json" "$id"
		assert_contains "$output" "process.user.uid: 4294967295: uids and gids must be in range"
		[[ "$output" != *"uid=0"* ]] || fail "ran as root: $output"
		husk delete --force "$id"
	done
}

@test "finding 2: an exec with 64 KiB and more of args and env runs as given; more than execve takes is refused naming the field" {
	local id
	id="$(new_id)"
	update_config --arg big "BIG=$(head -c 70000 /dev/zero | tr '\0' b)" '.process.env += [$big]'
	set_args sleep 1000
	run_bg "$id"
	run -0 husk exec "$id" sh -c 'echo ${#0} ${#BIG}' "$(head -c 65400 /dev/zero | tr '\0' a)"
	[ "$output" = "65400 70000" ] || fail "output: $output"
	run -0 husk exec --env "MORE=$(head -c 120000 /dev/zero | tr '\0' m)" "$id" sh -c 'echo ${#MORE}'
	[ "$output" = 120000 ] || fail "output: $output"
	# Over a quarter of the stack rlimit (8 MiB here): refused, nothing runs.
	update_config '.process.rlimits = [{"type": "RLIMIT_STACK", "soft": 8388608, "hard": 8388608}]'
	local i
	for i in $(seq 24); do
		update_config --arg v "V$i=$(head -c 100000 /dev/zero | tr '\0' v)" '.process.env += [$v]'
	done
	set_args true
	id="$(new_id)"
	run ! husk run --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "process.env: " "MiB of args and environment, over the 2 MiB execve allows"
	assert_no_container "$id"
}

@test "finding 3: a container with CAP_SYS_PTRACE scanning its pids during 200 execs attaches to nothing more privileged than itself or without its filter" {
	local id i
	scanner_config
	set_args /bin/pid-scanner /tmp/stop
	id="$(new_id)"
	run_bg "$id"
	for i in $(seq 200); do
		case $((i % 5)) in
		0) husk exec -t "$id" true </dev/null >/dev/null 2>&1 3>&- || fail "exec -t $i" ;;
		1) husk exec -d "$id" sleep 0.2 </dev/null >/dev/null 2>&1 3>&- || fail "exec -d $i" ;;
		2) husk exec --user 1000:1000 "$id" true </dev/null >/dev/null 2>&1 3>&- || fail "exec --user $i" ;;
		*) husk exec "$id" true </dev/null >/dev/null 2>&1 3>&- || fail "exec $i" ;;
		esac
	done
	touch "$BUNDLE/rootfs/tmp/stop"
	wait_for_status "$id" stopped
	scanner_done "$TEST_DIR/$id.out"
}

@test "finding 3: a process exec'd into each of 50 created containers finds their waiting init with the process's credentials and filter" {
	local id i
	scanner_config
	set_args sleep 1000
	for i in $(seq 50); do
		id="$(new_id)"
		create_bg "$id"
		rm -f "$BUNDLE/rootfs/tmp/stop"
		husk exec -d --pid-file "$TEST_DIR/scan.pid" "$id" /bin/pid-scanner /tmp/stop \
			</dev/null >"$TEST_DIR/scan.out" 2>&1 3>&- || fail "exec the scanner: $(cat "$TEST_DIR/scan.out")"
		sleep 0.1
		touch "$BUNDLE/rootfs/tmp/stop"
		for _ in $(seq 200); do pid_alive "$(cat "$TEST_DIR/scan.pid")" || break; sleep 0.02; done
		[ "$i" -gt 1 ] || scanner_done "$TEST_DIR/scan.out"
		grep -q "violations 0$" "$TEST_DIR/scan.out" || fail "create $i: $(cat "$TEST_DIR/scan.out")"
		husk delete --force "$id"
	done
}

@test "finding 3: containers joining the scanner's user and pid namespaces, 50 of them: their init is never attachable while it builds the container" {
	# In the container's user namespace, CAP_SYS_PTRACE does not reach a
	# non-dumpable image exec'd in the host's: the container's pid 1, which
	# builds the rootfs. (Without a user namespace, CAP_SYS_PTRACE over the
	# host's reaches it while it builds the rootfs: see docs/architecture.md.)
	requires_userns
	local s pid i
	scanner_config
	set_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	chmod 1777 "$BUNDLE/rootfs/tmp"
	set_args /bin/pid-scanner /tmp/stop
	s="$(new_id)"
	run_bg "$s"
	pid="$(container_pid "$s")"
	set_ns user "/proc/$pid/ns/user"
	set_ns pid "/proc/$pid/ns/pid"
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)'
	set_args sh -c 'sleep 0.05'
	for i in $(seq 50); do
		husk run --bundle "$BUNDLE" "$(new_id)" </dev/null >"$TEST_DIR/run.out" 2>&1 3>&- ||
			fail "run $i: $(cat "$TEST_DIR/run.out")"
	done
	touch "$BUNDLE/rootfs/tmp/stop"
	wait_for_status "$s" stopped
	scanner_done "$TEST_DIR/$s.out"
}

@test "finding 5: a #!/proc/self/exe script, a nested one and an ELF whose interpreter is /proc/self/exe never run the host's husk" {
	local id elf interp
	printf '#!/proc/self/exe --version\n' >"$BUNDLE/rootfs/bin/evilsh"
	printf '#!/bin/evilsh\n' >"$BUNDLE/rootfs/bin/evil2"
	# A dynamic ELF of the host with its PT_INTERP made /proc/self/exe.
	elf="$(type -P true)"
	interp="$(tr -d '\0' < <(readelf -p .interp "$elf" 2>/dev/null | awk '/\]/ {print $NF}'))"
	[ -n "$interp" ] || skip "no dynamic ELF with an interpreter on this host"
	python3 - "$elf" "$interp" "$BUNDLE/rootfs/bin/evil-elf" <<-'EOF'
		import sys
		data = open(sys.argv[1], 'rb').read()
		old = sys.argv[2].encode() + b'\0'
		new = b'/proc/self/exe\0'.ljust(len(old), b'\0')
		assert data.count(old) >= 1
		open(sys.argv[3], 'wb').write(data.replace(old, new, 1))
	EOF
	chmod +x "$BUNDLE/rootfs/bin/evilsh" "$BUNDLE/rootfs/bin/evil2" "$BUNDLE/rootfs/bin/evil-elf"
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	local prog
	for prog in /bin/evilsh /bin/evil2 /bin/evil-elf; do
		run husk exec "$id" "$prog"
		echo "$prog: $status $output"
		[ "$status" -ne 0 ] || fail "$prog ran: $output"
		[[ "$output" != *"husk version"* && "$output" != *"commit:"* ]] || fail "$prog ran husk: $output"
		assert_contains "$output" "permission denied"
	done
	# The container's own process: its execve fails, exit 127 as a shell's.
	set_args /bin/evilsh
	run -127 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	assert_contains "$output" "permission denied"
	[[ "$output" != *"husk version"* ]] || fail "run /bin/evilsh ran husk: $output"
}

@test "finding 6: a seccomp filter that kills the launcher fails run within 10 s naming seccomp and the action, leaving nothing" {
	local id nnp
	set_args true
	for nnp in true false; do
		update_config --argjson n "$nnp" '.process.noNewPrivileges = $n | .linux.seccomp = {"defaultAction": "SCMP_ACT_KILL"}'
		id="$(new_id)"
		HUSK_TIMEOUT=10 run husk run --bundle "$BUNDLE" "$id" </dev/null
		[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "noNewPrivileges $nnp: run hung: $output"
		[ "$status" -ne 0 ] || fail "noNewPrivileges $nnp: run worked: $output"
		assert_contains "$output" "linux.seccomp" "SIGSYS" "SCMP_ACT_KILL"
		assert_no_container "$id"
	done
	# An exec: the filter kills the launcher's fork.
	update_config '.process.noNewPrivileges = true | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["clone", "clone3", "fork", "vfork"], "action": "SCMP_ACT_KILL_PROCESS"}]}'
	set_args sleep 1000
	id="$(new_id)"
	run_bg "$id"
	HUSK_TIMEOUT=10 run husk exec "$id" true
	[ "$status" -ne 124 ] && [ "$status" -ne 0 ] || fail "exec: status $status: $output"
	assert_contains "$output" "linux.seccomp" "SIGSYS" "SCMP_ACT_KILL_PROCESS on clone"
	[ "$(container_status "$id")" = running ] || fail "the container did not survive"
}
