#!/usr/bin/env bash
# The Docker suite's private daemon: Debian's dockerd (20.10) with its own
# data root, exec root, socket, pidfile, key file and cgroup parent, in a
# network namespace of its own, so that its bridge docker0, its iptables
# chains and its ip_forward sysctl never touch the host's. It runs the
# runtime under test as `husk` (--add-runtime) and its own runc as the
# reference; docker_each runs a test's body once per runtime.
#
# Environment knobs:
#   DOCKER_CLI       the client (default Debian's /usr/bin/docker; another
#                    docker on PATH may be newer than the daemon)
#   DOCKERD          the daemon (default /usr/sbin/dockerd)
#   DOCKER_RUNTIMES  the runtimes each test runs on (default "runc husk")

DOCKER_CLI="${DOCKER_CLI:-/usr/bin/docker}"
DOCKERD="${DOCKERD:-/usr/sbin/dockerd}"
DOCKER_RUNTIMES="${DOCKER_RUNTIMES:-runc husk}"

# Files and directories dockerd makes outside its data and exec roots, and
# host settings it would change outside its network namespace: recorded
# before it starts, checked after it stops.
DOCKER_HOST_DIRS="/run/docker /run/docker/plugins /etc/docker /var/lib/docker /run/containerd /run/containerd/s"
DOCKER_HOST_FILES="/etc/docker/key.json /run/docker.sock /run/docker.pid /root/.docker"
DOCKER_SYSCTLS="net/ipv4/ip_forward net/bridge/bridge-nf-call-iptables net/bridge/bridge-nf-call-ip6tables"

docker_() {
	timeout -k 5 "$CLIENT_TIMEOUT" "$DOCKER_CLI" -H "unix://$SUITE_DIR/d.sock" "$@"
}

# drun [docker run flags] ARGS...: docker run with the runtime of this
# round ($RT).
drun() {
	docker_ run --runtime "$RT" "$@"
}

# docker_each FUNCTION: run FUNCTION once per runtime, with RT set; the
# reference (runc) first. A failure names the runtime in the test's output.
docker_each() {
	local rt
	for rt in $DOCKER_RUNTIMES; do
		RT="$rt"
		echo "# runtime: $rt"
		"$1"
	done
}

# host_state: what the Docker daemon must leave as it found it, one line
# per item (directories and files it may make, the host's docker0, iptables
# chains and rules that name docker, the sysctls it sets).
host_state() {
	local p
	for p in $DOCKER_HOST_DIRS $DOCKER_HOST_FILES; do
		[ -e "$p" ] && echo "exists $p"
	done
	ip link show docker0 >/dev/null 2>&1 && echo "link docker0"
	{ iptables-save; ip6tables-save; } 2>/dev/null | grep -i docker | sed 's/\[[0-9]*:[0-9]*\]//'
	for p in $DOCKER_SYSCTLS; do
		[ -e "/proc/sys/$p" ] && echo "sysctl $p=$(cat "/proc/sys/$p")"
	done
	return 0
}

# docker_start: start the suite's dockerd (SUITE_DIR, DK_NETNS, DK_CGROUP
# set) and wait for its API. Without working iptables in its netns it runs
# with --iptables=false and DK_NO_IPTABLES says why.
docker_start() {
	local d="$SUITE_DIR" i iptables=true
	require_cmd "$DOCKERD" docker.io
	require_cmd "$DOCKER_CLI" docker.io
	host_state >"$d/host.before"
	# dockerd's netns is a bind mount in SUITE_DIR, not a name under
	# /var/run/netns, where other suites' cleanups look for their leaks.
	touch "$DK_NETNS" && unshare --net="$DK_NETNS" true || fail "cannot make a netns at $DK_NETNS"
	stat -L -c %i "$DK_NETNS" >"$d/netns.ino"
	nsenter --net="$DK_NETNS" ip link set lo up
	if ! DK_NO_IPTABLES="$(nsenter --net="$DK_NETNS" iptables -t nat -n -L 2>&1)"; then
		iptables=false
		DK_NO_IPTABLES="iptables -t nat does not work in a netns here: $DK_NO_IPTABLES"
	else
		DK_NO_IPTABLES=""
	fi
	# The key file is a daemon.json-only setting; without it dockerd
	# writes /etc/docker/key.json.
	jq -n --arg k "$d/key.json" '{"deprecated-key-path": $k}' >"$d/daemon.json"
	nsenter --net="$DK_NETNS" "$DOCKERD" --config-file "$d/daemon.json" \
		--data-root "$d/data" --exec-root "$d/exec" -H "unix://$d/d.sock" --pidfile "$d/dockerd.pid" \
		--cgroup-parent "/$DK_CGROUP" --exec-opt native.cgroupdriver=cgroupfs --iptables="$iptables" \
		--add-runtime husk="$CLIENT_RUNTIME" </dev/null >"$d/dockerd.log" 2>&1 3>&- &
	echo $! >"$d/dockerd.nsenter.pid"
	for ((i = 0; i < 600; i++)); do
		if docker_ version >/dev/null 2>&1; then
			# Every container's id, for its shim's socket (docker_shim_sockets);
			# the stream ends when dockerd stops.
			"$DOCKER_CLI" -H "unix://$d/d.sock" events --filter type=container --filter event=create \
				--format '{{.ID}}' </dev/null >"$d/ids" 2>/dev/null 3>&- &
			return 0
		fi
		kill -0 "$(cat "$d/dockerd.nsenter.pid")" 2>/dev/null || break
		sleep 0.1
	done
	tail -20 "$d/dockerd.log" >&2
	fail "dockerd did not come up on $d/d.sock"
}

# docker_shim_sockets: the sockets of the suite's shims that exist. containerd
# 1.6 names a shim's socket /run/containerd/s/ + sha256(ADDRESS/NAMESPACE/ID),
# ADDRESS its own socket (dockerd's containerd: EXEC_ROOT/containerd/) and
# NAMESPACE moby.
docker_shim_sockets() {
	local id s
	for id in $(cat "$SUITE_DIR/ids" 2>/dev/null); do
		s="/run/containerd/s/$(printf '%s' "$SUITE_DIR/exec/containerd/containerd.sock/moby/$id" | sha256sum | cut -d' ' -f1)"
		[ ! -e "$s" ] || echo "$s"
	done
}

# docker_stop: remove every container, SIGTERM dockerd by its pidfile and
# wait for it (it stops its containerd, whose shims exit with their tasks).
docker_stop() {
	local d="$SUITE_DIR" pid
	pid="$(cat "$d/dockerd.pid" 2>/dev/null || cat "$d/dockerd.nsenter.pid" 2>/dev/null)" || return 0
	if pid_alive "$pid"; then
		docker_ ps -aq 2>/dev/null | xargs -r "$DOCKER_CLI" -H "unix://$d/d.sock" rm -f >/dev/null 2>&1
		kill -TERM "$pid"
		wait_until 30 pid_dead "$pid" || kill -KILL "$pid"
	fi
	wait "$pid" 2>/dev/null || true
	# Its containerd and the event stream's client exit after it.
	wait_until 10 docker_daemons_gone || true
	rm -f "$d/dockerd.pid" "$d/dockerd.nsenter.pid"
}

# docker_import_image: the busybox rootfs (tests/integration) as IMAGE_REF.
docker_import_image() {
	local rootfs
	rootfs="$(build_rootfs)" || fail "cannot build the busybox rootfs"
	tar -C "$rootfs" --exclude=./.complete -cf "$SUITE_DIR/rootfs.tar" . || fail "cannot tar $rootfs"
	docker_ import --change 'CMD ["sh"]' "$SUITE_DIR/rootfs.tar" "$IMAGE_REF" >/dev/null ||
		fail "docker import failed"
	rm -f "$SUITE_DIR/rootfs.tar"
}

# docker_leaks: one line per thing the suite left after its daemon stopped:
# processes (dockerd, containerd, shims, docker-proxy, container processes),
# mounts, netns, shim sockets, cgroups, and changes to the host (files,
# docker0, iptables, sysctls).
docker_leaks() {
	local d="$SUITE_DIR" pid
	for pid in $(pgrep -f -- "$d/") $(docker_netns_pids) $(docker_cgroup_pids); do
		echo "process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	done
	grep -F " $d/" /proc/self/mountinfo | awk '{print "mount " $5}'
	docker_shim_sockets | sed 's/^/shim socket /'
	find /sys/fs/cgroup/ -maxdepth 3 -mindepth 2 -type d \( -name "$DK_CGROUP" -o -path "*/$DK_CGROUP/*" \) 2>/dev/null |
		sed 's/^/cgroup /'
	diff <(cat "$d/host.before") <(host_state) | grep '^[<>]' | sed 's/^/host changed: /'
	return 0
}

# pid_dead PID: the process is gone or a zombie (for wait_until).
pid_dead() {
	! pid_alive "$1"
}

# docker_daemons_gone: no process of the suite's is left (dockerd, its
# containerd, shims, docker-proxy, the event stream's client).
docker_daemons_gone() {
	[ -z "$(pgrep -f -- "$SUITE_DIR/")" ] && [ -z "$(docker_netns_pids)" ]
}

# docker_netns_pids: processes in dockerd's netns (docker-proxy, the
# daemons), found by the netns's inode: its bind mount may be gone.
docker_netns_pids() {
	local ino p
	ino="$(cat "$SUITE_DIR/netns.ino" 2>/dev/null)" || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/net" 2>/dev/null)" != "net:[$ino]" ] || echo "${p#/proc/}"
	done
}

# docker_cgroup_pids: processes in the suite's cgroup parent, any hierarchy.
docker_cgroup_pids() {
	cat /sys/fs/cgroup/*/"$DK_CGROUP"/cgroup.procs /sys/fs/cgroup/*/"$DK_CGROUP"/*/cgroup.procs \
		2>/dev/null | sort -u
}

# docker_remove_made: remove what the suite made outside SUITE_DIR and is
# not a leak: its netns once no process is in it, the cgroup parent dockerd
# made (Docker leaves it, as /docker) once empty, the shared directories
# dockerd made (/run/docker/plugins, ...) once empty. What stays is reported
# by docker_leaks.
docker_remove_made() {
	local f
	[ -n "$(docker_netns_pids)" ] || umount "$DK_NETNS" 2>/dev/null || true
	rmdir /sys/fs/cgroup/*/"$DK_CGROUP" 2>/dev/null || true
	for f in $(printf '%s\n' $DOCKER_HOST_DIRS | sort -r); do
		grep -qx "exists $f" "$SUITE_DIR/host.before" 2>/dev/null || rmdir "$f" 2>/dev/null || true
	done
}

# docker_clean: after a failure, remove what docker_leaks reports, so one
# failed suite does not poison the next.
docker_clean() {
	local d="$SUITE_DIR" pid f
	for pid in $(pgrep -f -- "$d/") $(docker_netns_pids) $(docker_cgroup_pids); do
		kill -KILL "$pid" 2>/dev/null || true
	done
	grep -F " $d/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
		while read -r f; do umount -l "$f" 2>/dev/null || true; done
	docker_shim_sockets | xargs -r rm -f
	sleep 0.2
	for f in /sys/fs/cgroup/*/"$DK_CGROUP"; do
		[ ! -d "$f" ] || find "$f" -noleaf -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	grep -qx "exists /etc/docker/key.json" "$d/host.before" 2>/dev/null || rm -f /etc/docker/key.json
	docker_remove_made
}

# cg_read PID WHAT: a limit of the cgroup of PID, read on the host, the
# same on cgroup v1 and v2: memory (bytes or max), pids (max), pids.current,
# cpu ("QUOTA PERIOD"), freezer (FROZEN or THAWED).
cg_read() {
	local pid="$1" v1 v2
	v1="$(awk -F: -v c="${2%%.*}" '{n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3}' \
		"/proc/$pid/cgroup")"
	v2="/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' "/proc/$pid/cgroup")"
	case "$2:${v1:+1}" in
	memory:1) cat "/sys/fs/cgroup/memory$v1/memory.limit_in_bytes" ;;
	memory:) cat "$v2/memory.max" ;;
	pids:1) cat "/sys/fs/cgroup/pids$v1/pids.max" ;;
	pids:) cat "$v2/pids.max" ;;
	pids.current:1) cat "/sys/fs/cgroup/pids$v1/pids.current" ;;
	pids.current:) cat "$v2/pids.current" ;;
	cpu:1) echo "$(cat "/sys/fs/cgroup/cpu$v1/cpu.cfs_quota_us") $(cat "/sys/fs/cgroup/cpu$v1/cpu.cfs_period_us")" ;;
	cpu:) cat "$v2/cpu.max" ;;
	freezer:1) cat "/sys/fs/cgroup/freezer$v1/freezer.state" ;;
	freezer:) [ "$(cat "$v2/cgroup.freeze")" = 1 ] && echo FROZEN || echo THAWED ;;
	*) fail "cg_read: unknown $2" ;;
	esac
}

# dpid NAME: the host PID of the container's init.
dpid() {
	docker_ inspect -f '{{.State.Pid}}' "$1"
}

# dk_is NAME FORMAT WANT: `docker inspect -f FORMAT NAME` prints WANT; with
# FORMAT "logs", the container's logs hold a line WANT. For wait_until.
dk_is() {
	if [ "$2" = logs ]; then
		docker_ logs "$1" 2>&1 | grep -qx -- "$3"
	else
		[ "$(docker_ inspect -f "$2" "$1" 2>/dev/null)" = "$3" ]
	fi
}

# dstate NAME: the container's status.
dstate() {
	docker_ inspect -f '{{.State.Status}}' "$1" 2>/dev/null
}
