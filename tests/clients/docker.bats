#!/usr/bin/env bats
# Debian's docker.io (20.10) drives the runtime under test: a private
# dockerd (docker_helpers.bash) with the runtime as `husk` and Docker's own
# runc as the reference; every test runs its body on both, runc first.
# Effects are checked where they land: limits in the container's cgroup on
# the host, capabilities in /proc/self/status, the terminal, the network.

load helpers
load docker_helpers

setup_file() {
	runtime_ready
	require_cmd nsenter util-linux
	export SUITE_DIR DK_NETNS DK_CGROUP DK_NO_IPTABLES DOCKER_CONFIG
	SUITE_DIR="$(new_suite_dir)"
	DK_NETNS="$SUITE_DIR/netns"
	DK_CGROUP="hdk$$"
	DOCKER_CONFIG="$SUITE_DIR/cli" # the client's config, not ~/.docker
	docker_start
	docker_import_image
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	docker_stop
	docker_clean
	rm -rf "$SUITE_DIR"
}

# Every test removes its containers; a leftover is a failure.
teardown() {
	local left
	[ -e "$SUITE_DIR/dockerd.pid" ] || return 0 # the last test stopped it
	left="$(docker_ ps -aq 2>/dev/null)"
	[ -z "$left" ] || {
		docker_ rm -f $left >/dev/null 2>&1
		fail "containers left: $left"
	}
}

@test "docker info lists husk as a runtime beside runc" {
	run -0 docker_ info --format '{{json .Runtimes}}'
	[ "$(jq -r .husk.path <<<"$output")" = "$CLIENT_RUNTIME" ] || fail "runtimes: $output"
	jq -e .runc <<<"$output" >/dev/null || fail "no runc: $output"
}

t_run_exit_codes() {
	run -0 drun --rm --network none "$IMAGE_REF" echo hello
	[ "$output" = hello ] || fail "output: $output"
	run -7 drun --rm --network none "$IMAGE_REF" sh -c 'exit 7'
	run -127 drun --rm --network none "$IMAGE_REF" no-such-command
	assert_contains "$output" 'no-such-command' 'executable file not found'
	run -126 drun --rm --network none "$IMAGE_REF" /etc/passwd
	assert_contains "$output" 'permission denied'
}

@test "docker run: output and exit codes (0, 7, 127 for a missing command, 126 for a file it cannot execute)" {
	docker_each t_run_exit_codes
}

t_run_tty_stdin() {
	# -t alone: a terminal for stdout and stdin, stdin closed.
	run -0 drun --rm --network none -t "$IMAGE_REF" sh -c 'test -t 0 && test -t 1 && tty' </dev/null
	assert_contains "$output" /dev/pts/
	# -i alone: the client's stdin reaches the process, and its end ends it.
	run -0 drun --rm -i --network none "$IMAGE_REF" sh -c 'cat; echo end; test -t 0 || echo no-tty' \
		<<<$'line-1\nline-2'
	[ "$output" = "line-1
line-2
end
no-tty" ] || fail "output: $output"
}

@test "docker run -t and -i: a terminal; stdin piped in to its end" {
	docker_each t_run_tty_stdin
}

t_run_memory() {
	run -0 drun -d --name mem --network none -m 48m "$IMAGE_REF" sleep 1000
	[ "$(cg_read "$(dpid mem)" memory)" = $((48 << 20)) ] || fail "memory limit: $(cg_read "$(dpid mem)" memory)"
	run -0 docker_ rm -f mem
	# A process that outgrows the limit is killed by the kernel's OOM killer.
	run -137 drun --name oom --network none -m 32m "$IMAGE_REF" awk 'BEGIN { s = "x"; while (1) s = s s }'
	run -0 docker_ inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}}' oom
	[ "$output" = "true 137" ] || fail "OOMKilled, exit code: $output"
	run -0 docker_ rm oom
}

@test "docker run -m: the limit in the container's memory cgroup, and the OOM killer at it" {
	docker_each t_run_memory
}

t_run_pids() {
	run -0 drun -d --name pids --network none --pids-limit 5 "$IMAGE_REF" sleep 1000
	[ "$(cg_read "$(dpid pids)" pids)" = 5 ] || fail "pids.max: $(cg_read "$(dpid pids)" pids)"
	# PID 1 and 4 sleeps fit; the next forks fail.
	run docker_ exec pids sh -c 'for i in 1 2 3 4 5 6; do sleep 1000 & done 2>&1'
	assert_contains "$output" "can't fork"
	[ "$(cg_read "$(dpid pids)" pids.current)" -le 5 ] || fail "pids.current: $(cg_read "$(dpid pids)" pids.current)"
	run -0 docker_ rm -f pids
}

@test "docker run --pids-limit: pids.max in the container's cgroup, and forks fail past it" {
	docker_each t_run_pids
}

t_run_cpus() {
	run -0 drun -d --name cpus --network none --cpus 0.5 "$IMAGE_REF" sleep 1000
	[ "$(cg_read "$(dpid cpus)" cpu)" = "50000 100000" ] || fail "cpu quota: $(cg_read "$(dpid cpus)" cpu)"
	run -0 docker_ rm -f cpus
	# A busy loop under a tenth of a CPU is throttled (it spins until the
	# cgroup's own count says so; docker_'s timeout bounds it).
	run -0 drun --rm --network none --cpus 0.1 "$IMAGE_REF" sh -c '
		f=/sys/fs/cgroup/cpu/cpu.stat; [ -e $f ] || f=/sys/fs/cgroup/cpu.stat
		while ! grep -q "nr_throttled [1-9]" $f; do :; done; echo throttled'
	[ "$output" = throttled ] || fail "output: $output"
}

@test "docker run --cpus: the CFS quota in the container's cgroup, and a busy loop throttled" {
	docker_each t_run_cpus
}

t_exec_basics() {
	run -0 drun -d --name ex --network none "$IMAGE_REF" sleep 1000
	run -0 docker_ exec ex sh -c 'echo exec-ok'
	[ "$output" = exec-ok ] || fail "output: $output"
	run -5 docker_ exec ex sh -c 'exit 5'
	# In every namespace and cgroup of the container's init.
	run -0 docker_ exec ex sh -c 'for n in mnt pid net ipc uts cgroup; do
			[ "$(readlink /proc/self/ns/$n)" = "$(readlink /proc/1/ns/$n)" ] || echo "other $n ns"; done
		[ "$(cat /proc/self/cgroup)" = "$(cat /proc/1/cgroup)" ] || echo "other cgroup"
		grep -E "^(CapEff|Seccomp|NoNewPrivs):" /proc/self/status'
	assert_contains "$output" "CapEff:	00000000a80425fb" "Seccomp:	2"
	[[ "$output" != *other* ]] || fail "$output"
	run -0 docker_ exec -u 1000:1000 -w /tmp -e FOO=bar ex sh -c 'id; pwd; echo "FOO=$FOO"'
	[ "$output" = "uid=1000(user) gid=1000(user) groups=1000(user)
/tmp
FOO=bar" ] || fail "output: $output"
	run -0 docker_ exec -u nobody ex id -un
	[ "$output" = nobody ] || fail "output: $output"
	run -126 docker_ exec ex no-such-command
	assert_contains "$output" 'executable file not found'
	# -t: a terminal; -i: stdin to its end.
	run -0 docker_ exec -t ex sh -c 'test -t 1 && tty' </dev/null
	assert_contains "$output" /dev/pts/
	run -0 docker_ exec -i ex cat <<<piped-in
	[ "$output" = piped-in ] || fail "output: $output"
	run -0 docker_ rm -f ex
}

@test "docker exec: output, exit codes, the container's namespaces and cgroup, -u, -w, -e, -t, -i" {
	docker_each t_exec_basics
}

# all_caps: every capability up to the kernel's last, as a CapEff mask.
all_caps() {
	printf '%016x' $(((1 << ($(cat /proc/sys/kernel/cap_last_cap) + 1)) - 1))
}

t_exec_privileged() {
	run -0 drun -d --name priv --network none "$IMAGE_REF" sleep 1000
	run docker_ exec --privileged priv grep CapEff /proc/self/status
	if [ "$(grep CapBnd /proc/self/status | cut -f2)" = "$(all_caps)" ]; then
		[ "$status" -eq 0 ] && [ "$output" = "CapEff:	$(all_caps)" ] || fail "exit $status: $output"
	else
		# No runtime can grant a capability its caller's bounding set lacks:
		# the exec is refused and the container runs on.
		[ "$status" -eq 126 ] || fail "exit $status: $output"
		assert_contains "$output" "operation not permitted"
		run -0 docker_ exec priv echo still-running
	fi
	run -0 docker_ exec priv grep CapEff /proc/self/status
	[ "$output" = "CapEff:	00000000a80425fb" ] || fail "after the privileged exec: $output"
	run -0 docker_ rm -f priv
}

@test "docker exec --privileged: every capability" {
	docker_each t_exec_privileged
	[ "$(grep CapBnd /proc/self/status | cut -f2)" = "$(all_caps)" ] ||
		skip "root's bounding set here ($(grep CapBnd /proc/self/status | cut -f2)) lacks capabilities up to cap_last_cap that --privileged asks for; checked: both runtimes refuse it (126) and the container runs on"
}

t_logs() {
	run -0 drun -d --name logs --network none "$IMAGE_REF" sh -c 'echo out-line; echo err-line >&2'
	wait_until 20 dk_is logs '{{.State.Status}}' exited ||
		fail "the container did not exit"
	run -0 --separate-stderr docker_ logs logs
	[ "$output" = out-line ] && [ "$stderr" = err-line ] || fail "stdout: $output; stderr: $stderr"
	run -0 docker_ rm logs
}

@test "docker logs: stdout and stderr of a detached container, each on its stream" {
	docker_each t_logs
}

t_stop_kill() {
	# stop: SIGTERM, which the process handles (once it says its trap is set).
	run -0 drun -d --name st --network none "$IMAGE_REF" sh -c 'trap "echo got-term; exit 0" TERM; echo ready
		while :; do sleep 0.1; done'
	wait_until 20 dk_is st logs ready || fail "st never ready"
	run -0 docker_ stop st
	run -0 docker_ inspect -f '{{.State.ExitCode}}' st
	[ "$output" = 0 ] || fail "exit code after stop: $output"
	run -0 docker_ logs st
	[ "$output" = "ready
got-term" ] || fail "logs: $output"
	run -0 docker_ rm st
	# stop of a process that ignores SIGTERM: SIGKILL after the timeout.
	run -0 drun -d --name st2 --network none "$IMAGE_REF" sh -c 'trap "" TERM; echo ready; while :; do sleep 0.1; done'
	wait_until 20 dk_is st2 logs ready || fail "st2 never ready"
	run -0 docker_ stop -t 1 st2
	run -0 docker_ inspect -f '{{.State.ExitCode}} {{.State.Status}}' st2
	[ "$output" = "137 exited" ] || fail "after stop -t 1: $output"
	run -0 docker_ rm st2
	# kill -s: the signal reaches the process, which runs on; kill: SIGKILL.
	run -0 drun -d --name kl --network none "$IMAGE_REF" sh -c 'trap "echo got-usr1" USR1; echo ready
		while :; do sleep 0.1; done'
	wait_until 20 dk_is kl logs ready || fail "kl never ready"
	run -0 docker_ kill -s USR1 kl
	wait_until 20 dk_is kl logs got-usr1 || fail "no got-usr1 in the logs"
	[ "$(dstate kl)" = running ] || fail "status after USR1: $(dstate kl)"
	run -0 docker_ kill kl
	wait_until 20 dk_is kl '{{.State.Status}}' exited || fail "kl did not exit"
	run -0 docker_ inspect -f '{{.State.ExitCode}}' kl
	[ "$output" = 137 ] || fail "exit code after kill: $output"
	run -0 docker_ rm kl
}

@test "docker stop (SIGTERM, then SIGKILL after the timeout) and kill (a named signal, SIGKILL)" {
	docker_each t_stop_kill
}

t_restart_policy() {
	run -0 drun -d --name rp --network none --restart on-failure:2 "$IMAGE_REF" sh -c 'echo run; exit 3'
	wait_until 30 dk_is rp '{{.RestartCount}} {{.State.Status}}' '2 exited' ||
		fail "restarts, status: $(docker_ inspect -f '{{.RestartCount}} {{.State.Status}}' rp)"
	run -0 docker_ inspect -f '{{.State.ExitCode}}' rp
	[ "$output" = 3 ] || fail "exit code: $output"
	run -0 docker_ logs rp
	[ "$output" = "run
run
run" ] || fail "logs: $output"
	run -0 docker_ rm rp
}

@test "docker run --restart on-failure:2: restarted twice, then exited with its code" {
	docker_each t_restart_policy
}

t_health() {
	run -0 drun -d --name hc --network none --health-cmd 'test -e /tmp/ok' --health-interval 200ms \
		--health-retries 1 "$IMAGE_REF" sleep 1000
	wait_until 30 dk_is hc '{{.State.Health.Status}}' unhealthy ||
		fail "not unhealthy: $(docker_ inspect -f '{{json .State.Health}}' hc)"
	run -0 docker_ exec hc touch /tmp/ok
	wait_until 30 dk_is hc '{{.State.Health.Status}}' healthy ||
		fail "not healthy: $(docker_ inspect -f '{{json .State.Health}}' hc)"
	run -0 docker_ rm -f hc
}

@test "docker healthcheck: exec probes make the container unhealthy, then healthy" {
	docker_each t_health
}

t_read_only_user() {
	run -1 drun --rm --network none --read-only --tmpfs /scratch "$IMAGE_REF" sh -c '
		touch /scratch/ok && echo scratch-ok; touch /x'
	assert_contains "$output" scratch-ok "/x: Read-only file system"
	run -0 drun --rm --network none --user 1000:1000 "$IMAGE_REF" sh -c 'id; touch /tmp/f; stat -c %u:%g /tmp/f'
	[ "$output" = "uid=1000(user) gid=1000(user) groups=1000(user)
1000:1000" ] || fail "output: $output"
	run -0 drun --rm --network none --user nobody "$IMAGE_REF" id -u
	[ "$output" = 65534 ] || fail "output: $output"
}

@test "docker run --read-only and --user (ids and a name from the image's passwd)" {
	docker_each t_read_only_user
}

t_caps() {
	run -0 drun --rm --network none "$IMAGE_REF" sh -c 'grep -E "^Cap(Eff|Bnd)" /proc/self/status; chown 1000 /tmp && echo chown-ok'
	assert_contains "$output" "CapEff:	00000000a80425fb" "CapBnd:	00000000a80425fb" chown-ok
	run -0 drun --rm --network none --cap-drop ALL --cap-add NET_ADMIN "$IMAGE_REF" sh -c '
		grep -E "^Cap(Prm|Eff|Bnd|Amb)" /proc/self/status; ip link set lo mtu 1280 && echo net-admin-ok
		chown 1000 /tmp 2>&1 || echo chown-refused'
	[ "$output" = "CapPrm:	0000000000001000
CapEff:	0000000000001000
CapBnd:	0000000000001000
CapAmb:	0000000000000000
net-admin-ok
chown: /tmp: Operation not permitted
chown-refused" ] || fail "output: $output"
	run -0 drun --rm --network none --cap-drop CHOWN "$IMAGE_REF" sh -c 'chown 1000 /tmp || echo chown-refused'
	assert_contains "$output" chown-refused
}

@test "docker run --cap-add/--cap-drop: the sets in /proc/self/status, and what they allow" {
	docker_each t_caps
}

t_pause_unpause() {
	run -0 drun -d --name pz --network none "$IMAGE_REF" sleep 1000
	run -0 docker_ pause pz
	[ "$(dstate pz)" = paused ] || fail "status: $(dstate pz)"
	[ "$(cg_read "$(dpid pz)" freezer)" = FROZEN ] || fail "freezer: $(cg_read "$(dpid pz)" freezer)"
	run -1 docker_ exec pz true
	assert_contains "$output" "is paused"
	run -0 docker_ unpause pz
	[ "$(dstate pz)" = running ] || fail "status: $(dstate pz)"
	[ "$(cg_read "$(dpid pz)" freezer)" = THAWED ] || fail "freezer: $(cg_read "$(dpid pz)" freezer)"
	run -0 docker_ exec pz echo thawed
	run -0 docker_ rm -f pz
}

@test "docker pause/unpause: the freezer state, exec refused while paused" {
	docker_each t_pause_unpause
}

t_update() {
	run -0 drun -d --name up --network none -m 64m --pids-limit 20 --cpus 0.5 "$IMAGE_REF" sleep 1000
	run -0 docker_ update -m 96m --memory-swap 96m --pids-limit 30 --cpus 1.5 up
	local pid
	pid="$(dpid up)"
	[ "$(cg_read "$pid" memory)" = $((96 << 20)) ] || fail "memory: $(cg_read "$pid" memory)"
	[ "$(cg_read "$pid" pids)" = 30 ] || fail "pids: $(cg_read "$pid" pids)"
	[ "$(cg_read "$pid" cpu)" = "150000 100000" ] || fail "cpu: $(cg_read "$pid" cpu)"
	run -0 docker_ exec up cat /sys/fs/cgroup/pids/pids.max
	[ "$output" = 30 ] || fail "pids.max inside: $output"
	run -0 docker_ rm -f up
}

@test "docker update: memory, pids and CPU of a running container reach its cgroup" {
	docker_each t_update
}

t_top_stats() {
	run -0 drun -d --name ts --network none -m 64m "$IMAGE_REF" sleep 1234
	run -0 docker_ top ts
	assert_contains "$output" "sleep 1234" "$(dpid ts)"
	run -0 docker_ stats --no-stream --format '{{.Name}} {{.MemUsage}} {{.PIDs}}' ts
	[[ "$output" =~ ^ts\ [0-9.]+[KMG]i?B\ /\ 64MiB\ 1$ ]] || fail "stats: $output"
	run -0 docker_ rm -f ts
}

@test "docker top and stats --no-stream: the container's processes, memory and pids" {
	docker_each t_top_stats
}

t_network_none() {
	run -0 drun --rm --network none "$IMAGE_REF" sh -c 'ls /sys/class/net; readlink /proc/1/ns/net'
	[ "$(head -1 <<<"$output")" = lo ] && [ "$(wc -l <<<"$output")" = 2 ] || fail "output: $output"
	[ "$(tail -1 <<<"$output")" != "$(nsenter --net="$DK_NETNS" readlink /proc/self/ns/net)" ] ||
		fail "the container is in dockerd's netns"
}

@test "docker run --network none: a netns of its own with only lo" {
	docker_each t_network_none
}

t_bridge() {
	local ip
	run -0 drun -d --name web "$IMAGE_REF" sh -c 'mkdir /www && echo "page from $(hostname)" >/www/index.html && httpd -f -p 8080 -h /www'
	ip="$(docker_ inspect -f '{{.NetworkSettings.IPAddress}}' web)"
	[[ "$ip" == 172.17.* ]] || fail "address on the default bridge: $ip"
	run -0 drun --rm "$IMAGE_REF" sh -c "ip route | grep default; ping -c1 -W5 172.17.0.1 >/dev/null && echo gw-ok
		for i in \$(seq 50); do wget -qO- http://$ip:8080/ 2>/dev/null && break; sleep 0.1; done"
	assert_contains "$output" "default via 172.17.0.1" gw-ok "page from"
	run -0 docker_ rm -f web
	# A published port, through docker-proxy in dockerd's netns.
	run -0 drun -d --name pub -p 127.0.0.1:18080:8080 "$IMAGE_REF" sh -c 'mkdir /www && echo published >/www/index.html && httpd -f -p 8080 -h /www'
	wait_until 20 nsenter --net="$DK_NETNS" "$BUSYBOX" wget -qO "$BATS_TEST_TMPDIR/page" http://127.0.0.1:18080/ ||
		fail "nothing on the published port"
	[ "$(cat "$BATS_TEST_TMPDIR/page")" = published ] || fail "page: $(cat "$BATS_TEST_TMPDIR/page")"
	run -0 docker_ rm -f pub
}

@test "docker's default bridge: an address, the gateway, container to container, a published port" {
	[ -z "$DK_NO_IPTABLES" ] || skip "$DK_NO_IPTABLES"
	docker_each t_bridge
}

@test "zz: nothing is left after docker rm -f and the daemon's stop" {
	local leaks
	docker_stop
	docker_remove_made
	leaks="$(docker_leaks)"
	if [ -n "$leaks" ]; then
		docker_clean
		fail "left behind: $leaks"
	fi
	rm -rf "$SUITE_DIR"
}
