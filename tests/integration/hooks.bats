#!/usr/bin/env bats
# hooks: every kind gets the state on stdin, runs in the namespaces the
# runtime-spec says, and fails (or not) the way it says.

load helpers

setup() {
	setup_husk
	OUT="$TEST_DIR/out"
	mkdir -p "$OUT"
	# The hook: saves its stdin and the mount namespace it ran in.
	cat >"$TEST_DIR/hook.sh" <<-'EOF'
		#!/bin/sh
		cat > "$1/$2.json"
		readlink /proc/self/ns/mnt > "$1/$2.mntns"
	EOF
	chmod +x "$TEST_DIR/hook.sh"
	# startContainer hooks resolve their path in the container.
	cp "$TEST_DIR/hook.sh" "$BUNDLE/rootfs/bin/hook.sh"
	update_config --arg out "$OUT" \
		'.mounts += [{destination: "/hookout", type: "bind", source: $out, options: ["rbind"]}]'
}

# add_hook KIND PATH ARG...: append a hook (args are the whole argv).
add_hook() {
	local kind="$1" path="$2" args
	shift 2
	args="$(for a in "$@"; do jq -n --arg a "$a" '$a'; done | jq -cs .)"
	update_config --arg k "$kind" --arg p "$path" --argjson a "$args" \
		'.hooks[$k] += [{path: $p, args: $a}]'
}

# state_field KIND FIELD prints FIELD of the state hook KIND received.
state_field() {
	jq -r ".$2" "$OUT/$1.json"
}

@test "hooks: every kind gets the state on stdin, in the right namespace" {
	local id kind pid hostns ctrns
	id="$(new_id)"
	for kind in prestart createRuntime createContainer poststart poststop; do
		add_hook "$kind" "$TEST_DIR/hook.sh" hook.sh "$OUT" "$kind"
	done
	add_hook startContainer /bin/hook.sh hook.sh /hookout startContainer
	update_config '.annotations = {"org.husk.test": "hooks"}'
	set_args sleep 1000
	create_bg "$id"
	pid="$(container_pid "$id")"
	hostns="$(readlink /proc/self/ns/mnt)"
	ctrns="$(readlink "/proc/$pid/ns/mnt")"
	for kind in prestart createRuntime createContainer; do
		[ -s "$OUT/$kind.json" ] || fail "$kind did not run at create"
		[ "$(state_field "$kind" id)" = "$id" ] || fail "$kind id: $(cat "$OUT/$kind.json")"
		[ "$(state_field "$kind" status)" = creating ] || fail "$kind status: $(cat "$OUT/$kind.json")"
		[ "$(state_field "$kind" bundle)" = "$BUNDLE" ] || fail "$kind bundle: $(cat "$OUT/$kind.json")"
		[ "$(state_field "$kind" 'annotations["org.husk.test"]')" = hooks ] || fail "$kind annotations"
	done
	[ ! -e "$OUT/startContainer.json" ] || fail "startContainer ran at create"
	# The runtime's hooks see the container's init by its host pid; the
	# container's own see it as pid 1 of its pid namespace.
	[ "$(state_field createRuntime pid)" = "$pid" ] || fail "createRuntime pid"
	[ "$(state_field prestart pid)" = "$pid" ] || fail "prestart pid"
	[ "$(state_field createContainer pid)" = 1 ] || fail "createContainer pid: $(cat "$OUT/createContainer.json")"
	[ "$(cat "$OUT/createRuntime.mntns")" = "$hostns" ] || fail "createRuntime ran in $(cat "$OUT/createRuntime.mntns")"
	[ "$(cat "$OUT/createContainer.mntns")" = "$ctrns" ] || fail "createContainer ran in $(cat "$OUT/createContainer.mntns"), want $ctrns"

	husk start "$id" 3>&-
	[ "$(state_field startContainer status)" = created ] || fail "startContainer: $(cat "$OUT/startContainer.json")"
	[ "$(state_field startContainer pid)" = 1 ] || fail "startContainer pid"
	[ "$(cat "$OUT/startContainer.mntns")" = "$ctrns" ] || fail "startContainer ran in the wrong mount namespace"
	[ "$(state_field poststart status)" = running ] || fail "poststart: $(cat "$OUT/poststart.json")"
	[ "$(state_field poststart pid)" = "$pid" ] || fail "poststart pid"
	[ "$(cat "$OUT/poststart.mntns")" = "$hostns" ] || fail "poststart ran in the wrong mount namespace"
	[ ! -e "$OUT/poststop.json" ] || fail "poststop ran before delete"

	husk kill "$id" KILL
	wait_for_status "$id" stopped
	husk delete "$id"
	[ "$(state_field poststop status)" = stopped ] || fail "poststop: $(cat "$OUT/poststop.json")"
	[ "$(state_field poststop id)" = "$id" ] || fail "poststop id"
	[ "$(state_field poststop pid)" = null ] || fail "poststop pid"
	[ "$(cat "$OUT/poststop.mntns")" = "$hostns" ] || fail "poststop ran in the wrong mount namespace"
	assert_no_container "$id"
}

@test "hooks: args and env reach the hook" {
	local id
	id="$(new_id)"
	update_config --arg out "$OUT" '.hooks.createRuntime = [{path: "/bin/sh",
		args: ["sh", "-c", "echo \"$0 $1 $HOOK_VAR\" > \"$OUT_DIR/args\"", "first", "second"],
		env: ["HOOK_VAR=from-env", ("OUT_DIR=" + $out)]}]'
	set_args true
	create_bg "$id"
	[ "$(cat "$OUT/args")" = "first second from-env" ] || fail "hook wrote: $(cat "$OUT/args")"
}

@test "hooks: a createRuntime hook that times out fails create and leaves nothing" {
	local id start
	id="$(new_id)"
	update_config '.hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "echo waiting; sleep 59.4321"], timeout: 1}]'
	add_hook poststop "$TEST_DIR/hook.sh" hook.sh "$OUT" poststop
	start=$SECONDS
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	[ $((SECONDS - start)) -lt 10 ] || fail "create took $((SECONDS - start))s with a 1s hook timeout"
	assert_contains "$output" 'hooks.createRuntime[0]: error running createRuntime hook #0: "/bin/sh": timed out after 1s: waiting'
	assert_no_container "$id"
	# A failed createRuntime ends the lifecycle with the poststop hooks.
	[ "$(state_field poststop status)" = stopped ] || fail "poststop did not run after the failed create"
	! pgrep -f "sleep 59.4321" >/dev/null || fail "the hook's sleep survived: $(pgrep -af "sleep 59.4321")"
}

@test "hooks: a createContainer hook that times out fails create and leaves nothing" {
	local id
	id="$(new_id)"
	update_config '.hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c", "sleep 60"], timeout: 1}]'
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" 'hooks.createContainer[0]: error running createContainer hook #0: "/bin/sh": timed out after 1s'
	assert_no_container "$id"
}

@test "hooks: a failing createContainer hook fails create with its output" {
	local id
	id="$(new_id)"
	update_config '.hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c", "echo broken >&2; exit 4"]}]'
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" 'hooks.createContainer[0]: error running createContainer hook #0: "/bin/sh": exit status 4: broken'
	assert_no_container "$id"
}

@test "hooks: createContainer paths resolve in the runtime's mount namespace" {
	local id
	id="$(new_id)"
	# $TEST_DIR/hook.sh exists on the host only, not in the rootfs.
	add_hook createContainer "$TEST_DIR/hook.sh" hook.sh "$OUT" createContainer
	set_args true
	create_bg "$id"
	[ -s "$OUT/createContainer.json" ] || fail "the createContainer hook did not run"
}

@test "hooks: a failing startContainer hook fails start with its error" {
	local id
	id="$(new_id)"
	update_config '.hooks.startContainer = [{path: "/bin/sh", args: ["sh", "-c", "echo no-start >&2; exit 7"]}]'
	set_args sh -c 'echo should-not-run > /hookout/ran'
	create_bg "$id"
	run ! husk start "$id"
	assert_contains "$output" 'hooks.startContainer[0]: error running startContainer hook #0: "/bin/sh": exit status 7: no-start'
	wait_for_status "$id" stopped
	[ ! -e "$OUT/ran" ] || fail "the process ran"
	husk delete "$id"
	assert_no_container "$id"
}

@test "hooks: a failing poststart hook fails start and stops the container; the next one does not run (runtime-spec 1.3.0, runc)" {
	local id pid
	id="$(new_id)"
	update_config '.hooks.poststart = [{path: "/bin/sh", args: ["sh", "-c", "echo poststart-said-no >&2; exit 3"]}]'
	add_hook poststart "$TEST_DIR/hook.sh" hook.sh "$OUT" poststart
	set_args sleep 1000
	create_bg "$id"
	pid="$(container_pid "$id")"
	run ! --separate-stderr husk start "$id"
	assert_contains "$stderr" 'hooks.poststart[0]' 'exit status 3' poststart-said-no
	[ ! -e "$OUT/poststart.json" ] || fail "the poststart hook after the failed one ran"
	assert_pid_gone "$pid"
	[ "$(container_status "$id")" = stopped ] || fail "status after a failed poststart: $(container_status "$id")"
	husk delete "$id"
	assert_no_container "$id"
}

@test "hooks: run with a failing poststart hook exits non-zero with its error and leaves nothing, as runc and crun (where crun runs)" {
	load runtimes
	older_spec
	update_config '.hooks.poststart = [{path: "/bin/sh", args: ["sh", "-c", "echo poststart-said-no >&2; exit 3"]}]'
	set_args sh -c 'echo started; exec sleep 1000'
	local bin id
	for bin in $(runtimes); do
		id="$(new_id)"
		run ! --separate-stderr rt "$bin" run --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$stderr" poststart-said-no
		run -0 rt "$bin" list -q
		[ -z "$output" ] || fail "$bin left: $output"
	done
	assert_no_container "$id"
}

@test "hooks: poststop runs on delete; failing ones are logged and ignored" {
	local id
	id="$(new_id)"
	update_config '.hooks.poststop = [{path: "/bin/sh", args: ["sh", "-c", "exit 3"]}]'
	add_hook poststop "$TEST_DIR/hook.sh" hook.sh "$OUT" poststop
	set_args true
	run_bg "$id"
	wait_for_status "$id" stopped
	run -0 husk delete "$id"
	assert_contains "$output" level=warning 'hooks.poststop[0]' 'exit status 3'
	[ "$(state_field poststop status)" = stopped ] || fail "poststop: $(cat "$OUT/poststop.json")"
	assert_no_container "$id"
}

@test "hooks: husk run runs the poststop hooks when the container exits" {
	local id
	id="$(new_id)"
	add_hook poststop "$TEST_DIR/hook.sh" hook.sh "$OUT" poststop
	set_args true
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$(state_field poststop id)" = "$id" ] || fail "poststop did not run"
}

@test "hooks: bad values get an error naming the field and leave nothing" {
	local id hooks want
	while IFS='|' read -r hooks want; do
		id="$(new_id)"
		update_config --argjson h "$hooks" '.hooks = $h'
		run ! husk create --bundle "$BUNDLE" "$id" </dev/null
		assert_contains "$output" "config.json: $want"
		assert_no_container "$id"
	done <<-'EOF'
		{"createRuntime": [{"path": "relative/hook"}]}|hooks.createRuntime[0].path: must be absolute, got "relative/hook"
		{"prestart": [{"path": ""}]}|hooks.prestart[0].path: must not be empty
		{"poststop": [{"path": "/bin/true", "timeout": 0}]}|hooks.poststop[0].timeout: must be greater than zero, got 0
		{"createContainer": [{"path": "/bin/true", "env": ["NOEQUALS"]}]}|hooks.createContainer[0].env[0]: want NAME=VALUE, got "NOEQUALS"
	EOF
}

@test "hooks: a createRuntime hook that is not there fails create and leaves nothing" {
	local id
	id="$(new_id)"
	update_config '.hooks.createRuntime = [{path: "/nonexistent/hook"}]'
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" 'hooks.createRuntime[0]: error running createRuntime hook #0: "/nonexistent/hook"' "no such file or directory"
	assert_no_container "$id"
}

@test "hooks: a failing hook's error has runc's 'error running <kind> hook #<n>:' with the path and exit status" {
	local id
	id="$(new_id)"
	update_config '.hooks.prestart = [{path: "/bin/true"}, {path: "/bin/sh", args: ["sh", "-c", "exit 3"]}]'
	set_args true
	run ! husk create --bundle "$BUNDLE" "$id" </dev/null
	assert_contains "$output" "error running prestart hook #1:" "hooks.prestart[1]" '"/bin/sh"' "exit status 3"
	assert_no_container "$id"
}

# start_hook_probe NNP: a startContainer hook (in the container) that
# saves its seccomp mode, environment and fds to /hookout/probe.
start_hook_probe() {
	cat >"$BUNDLE/rootfs/bin/probe.sh" <<-'EOF'
		#!/bin/sh
		{ grep Seccomp: /proc/self/status; env | sort; echo "fds: $(ls /proc/self/fd | sort -n | tr '\n' ' ')"; } > /hookout/probe
	EOF
	chmod +x "$BUNDLE/rootfs/bin/probe.sh"
	update_config --argjson nnp "$1" '.process.noNewPrivileges = $nnp
		| .process.env = ["PATH=/bin", "FROM_PROCESS=yes", "HOME="]
		| .hooks.startContainer = [{path: "/bin/probe.sh"}]
		| .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["mkdir"], action: "SCMP_ACT_ERRNO"}]}'
	set_args true
}

@test "hooks: startContainer hooks run with the process's environment" {
	start_hook_probe false
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	assert_contains "$(cat "$OUT/probe")" "FROM_PROCESS=yes" "HOME=/root"
}

@test "hooks: startContainer hooks run after the seccomp filter is loaded, also with noNewPrivileges" {
	start_hook_probe true
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	assert_contains "$(cat "$OUT/probe")" "Seccomp:	2"
}

@test "hooks: startContainer hooks see only their stdio fds" {
	start_hook_probe false
	# An fd husk's caller leaves open must not reach the hook either.
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null 7</dev/null
	# ls's own fd on /proc/self/fd is the fourth.
	[ "$(grep fds: "$OUT/probe")" = "fds: 0 1 2 3 " ] || fail "the hook saw: $(grep fds: "$OUT/probe")"
}

@test "hooks: createContainer hooks run with the container's rootfs as their cwd" {
	local id
	id="$(new_id)"
	update_config --arg out "$OUT" '.hooks.createContainer = [{path: "/bin/sh",
		args: ["sh", "-c", "pwd > \"$0/cwd\"; ls bin/busybox > \"$0/ls\"", $out]}]'
	set_args true
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$(cat "$OUT/cwd")" = "$BUNDLE/rootfs" ] || fail "cwd: $(cat "$OUT/cwd")"
	[ "$(cat "$OUT/ls")" = bin/busybox ] || fail "ls: $(cat "$OUT/ls")"
}

@test "hooks: poststart runs only after the process has been exec'd" {
	local id listener sock pid
	id="$(new_id)"
	listener="$(build_tool seccomp-listener)" || fail "cannot build seccomp-listener"
	sock="$TEST_DIR/listener.sock"
	# The listener holds the process's execve for a second: a poststart
	# hook that ran before it would see husk init, not the process.
	"$listener" -state "$TEST_DIR/state.json" -delay 1s "$sock" 3>&- &
	pid=$!
	track_bg "$pid"
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	update_config --arg l "$sock" --arg out "$OUT" '.process.noNewPrivileges = true
		| .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $l,
			syscalls: [{names: ["execve"], action: "SCMP_ACT_NOTIFY"}]}
		| .hooks.poststart = [{path: "/bin/sh",
			args: ["sh", "-c", "cat /proc/$(jq -r .pid)/comm > \"$0/comm\"", $out]}]'
	set_args sleep 1000
	create_bg "$id"
	husk start "$id" 3>&-
	[ "$(cat "$OUT/comm")" = sleep ] || fail "poststart saw the container's pid 1 as: $(cat "$OUT/comm")"
	husk delete --force "$id"
}

@test "hooks: a created init holds no fd of its caller's (an extra fd 10 on /dev/null)" {
	local id pid
	id="$(new_id)"
	set_args sleep 1000
	husk create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&- 10</dev/null
	pid="$(container_pid "$id")"
	local fds
	fds="$(ls -l "/proc/$pid/fd" | awk '/->/ {print $(NF-2), $NF}')"
	# /dev/null only as stdio (the Go runtime's own fds, eventfd, epoll
	# and cgroup files, are issue 11's, tests/security/fds.bats).
	! grep -v '^[012] ' <<<"$fds" | grep -q ' /dev/null$' || fail "init holds the caller's fd 10: $fds"
	husk delete --force "$id"
}

@test "hooks: a create that fails after init started says one error on stderr, the real one (no line of init's first)" {
	local id kind
	for kind in prestart createRuntime; do
		id="$(new_id)"
		update_config --arg k "$kind" '.hooks = {($k): [{path: "/bin/sh", args: ["sh", "-c", "echo the-hook-said-no >&2; exit 4"]}]}'
		run ! --separate-stderr husk create --bundle "$BUNDLE" "$id" </dev/null
		[ "${#stderr_lines[@]}" -eq 1 ] || fail "$kind: more than one line on stderr: $stderr"
		assert_contains "${stderr_lines[0]}" "hooks.$kind[0]" the-hook-said-no "exit status 4"
		assert_no_container "$id"
	done
}
