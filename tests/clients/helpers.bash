#!/usr/bin/env bash
# Shared set-up for the client suites (containerd via ctr, the CRI, podman):
# real clients drive the runtime under test unchanged.
#
# Every daemon runs on private sockets and directories under one suite dir
# (SUITE_DIR), is stopped by its PID, and the suite's last test checks that
# nothing is left behind (mounts, netns, cgroups, shims, sockets, CNI
# results, links).
#
# Environment knobs:
#   HUSK_CLIENT_RUNTIME  the runtime the clients drive (default: ./husk);
#                        HUSK_CLIENT_RUNTIME=/usr/sbin/runc runs the same
#                        suites against Debian's runc
#   HUSK_TEST_CACHE      where the busybox rootfs, image and tools are built
#   CONTAINERD_SYSTEMD_CGROUP  containerd's runc option SystemdCgroup
#                        (default false; the VM lane's guest (a) sets true)
#   CONTAINERD_ENABLE_SELINUX  the CRI's enable_selinux (default false; the VM
#                        lane's SELinux guest (d) sets true)
#   CONTAINERD_CONFIG_EXTRA  TOML appended to containerd's config (critest:
#                        the registry's hosts.toml directory)
#   CNI_EXTRA_PLUGINS    JSON plugin objects appended to the hcri network's
#                        chain (critest: portmap)
#   HUSK_CONTAINERD_DIR  a directory with containerd, containerd-shim-runc-v2
#                        and ctr to use instead of Debian's 1.6 (the 2.x
#                        build of tests/clients/build.sh containerd2)

bats_require_minimum_version 1.5.0

# build_rootfs, fail, assert_contains and pid_alive come from the
# integration helpers; this file overrides their setup and teardown.
# Sourced by path, not `load`ed: bats resolves `load` against the test
# file's directory, and the VM lane's client suites live in tests/vm/suites.
source "$(dirname "${BASH_SOURCE[0]}")/../integration/helpers.bash"

CLIENT_RUNTIME="${HUSK_CLIENT_RUNTIME:-$REPO_ROOT/husk}"
# containerd finds its shim on PATH. ctr 2.x prints the daemon's
# deprecation warnings (cgroup v1 on a hybrid host) on stderr, mixed into
# the output the suites compare, unless told not to.
[ -z "${HUSK_CONTAINERD_DIR:-}" ] || PATH="$HUSK_CONTAINERD_DIR:$PATH"
export CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1
CLIENT_CACHE="$HUSK_TEST_CACHE/clients"
IMAGE_REF="localhost/husk-busybox:1"
PAUSE_REF="localhost/husk-pause:1"
CLIENT_TIMEOUT="${CLIENT_TIMEOUT:-60}"

setup() { :; }
teardown() { :; }

# runtime_ready fails the file early (and clearly) when the runtime under
# test is missing.
runtime_ready() {
	[ -x "$CLIENT_RUNTIME" ] ||
		fail "runtime under test not found at $CLIENT_RUNTIME (make husk, or set HUSK_CLIENT_RUNTIME)"
}

# require_exec skips a test that needs `RUNTIME exec` when the runtime under
# test has no exec command yet.
require_exec() {
	"$CLIENT_RUNTIME" exec --help >/dev/null 2>&1 ||
		skip "$CLIENT_RUNTIME has no exec command"
}

# require_cmd NAME [PACKAGE]: skip unless NAME is on PATH.
require_cmd() {
	command -v "$1" >/dev/null || skip "$1 not installed (apt-get install ${2:-$1})"
}

# new_suite_dir makes the suite's private directory and prints it. It lives
# under /tmp with a short name: unix socket paths are limited to 108 bytes.
new_suite_dir() {
	local d
	d="$(mktemp -d /tmp/hcl.XXXXXX)" || return 1
	chmod 0755 "$d"
	echo "$d"
}

# ------------------------------------------------------------------ image ---

# build_image_tar prints the path of an OCI image layout tar (built once) that
# holds two images of one busybox layer: IMAGE_REF (cmd sh) and PAUSE_REF
# (entrypoint "sleep inf", the CRI's sandbox image).
build_image_tar() {
	local rootfs sum out
	rootfs="$(build_rootfs)" || return 1
	sum="$(sha256sum "$BUSYBOX" | cut -c1-16)"
	out="$CLIENT_CACHE/images-$sum.tar"
	mkdir -p "$CLIENT_CACHE"
	(
		flock 9
		[ -s "$out" ] && exit 0
		make_oci_layout "$rootfs" "$out.tmp" && mv "$out.tmp" "$out"
	) 9>"$CLIENT_CACHE/.lock" || return 1
	echo "$out"
}

# blob FILE DIR: store FILE as a sha256 blob in the layout DIR, print its digest.
blob() {
	local sum
	sum="$(sha256sum "$1" | cut -d' ' -f1)" || return 1
	mv "$1" "$2/blobs/sha256/$sum"
	echo "sha256:$sum"
}

# make_oci_layout ROOTFS OUT: an uncompressed, reproducible OCI layout tar.
make_oci_layout() {
	local rootfs="$1" out="$2" dir layer diff size cfg man cfg_size man_size entries=()
	dir="$(mktemp -d "$CLIENT_CACHE/oci.XXXXXX")" || return 1
	mkdir -p "$dir/blobs/sha256"
	tar -C "$rootfs" --exclude=./.complete --sort=name --mtime=@0 --owner=0 --group=0 \
		--numeric-owner -cf "$dir/layer.tar" . || return 1
	size="$(stat -c %s "$dir/layer.tar")"
	layer="$(blob "$dir/layer.tar" "$dir")" || return 1
	local name ref process
	for name in busybox pause; do
		if [ "$name" = busybox ]; then
			ref="$IMAGE_REF" process='{"Cmd": ["sh"]}'
		else
			ref="$PAUSE_REF" process='{"Entrypoint": ["sleep", "inf"]}'
		fi
		jq -n --arg l "$layer" --argjson p "$process" '{
			architecture: "amd64", os: "linux",
			config: ({Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], WorkingDir: "/"} + $p),
			rootfs: {type: "layers", diff_ids: [$l]}
		}' >"$dir/config.json" || return 1
		cfg_size="$(stat -c %s "$dir/config.json")"
		cfg="$(blob "$dir/config.json" "$dir")" || return 1
		jq -n --arg c "$cfg" --argjson cs "$cfg_size" --arg l "$layer" --argjson ls "$size" '{
			schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
			config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
			layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]
		}' >"$dir/manifest.json" || return 1
		man_size="$(stat -c %s "$dir/manifest.json")"
		man="$(blob "$dir/manifest.json" "$dir")" || return 1
		entries+=("$(jq -cn --arg m "$man" --argjson s "$man_size" --arg r "$ref" '{
			mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $s,
			platform: {architecture: "amd64", os: "linux"},
			annotations: {"io.containerd.image.name": $r, "org.opencontainers.image.ref.name": ($r | sub(".*:"; ""))}
		}')")
	done
	printf '%s\n' "${entries[@]}" | jq -s '{schemaVersion: 2, manifests: .}' >"$dir/index.json"
	echo '{"imageLayoutVersion": "1.0.0"}' >"$dir/oci-layout"
	tar -C "$dir" --sort=name --mtime=@0 --owner=0 --group=0 -cf "$out" oci-layout index.json blobs ||
		return 1
	rm -rf "$dir"
}

# build_criclient prints the path of the CRI client (tests/clients/criclient,
# its own Go module), built once per run, or prebuilt in HUSK_TOOLS_DIR.
build_criclient() {
	if [ -n "${HUSK_TOOLS_DIR:-}" ] && [ -x "$HUSK_TOOLS_DIR/criclient" ]; then
		echo "$HUSK_TOOLS_DIR/criclient"
		return 0
	fi
	local out="$CLIENT_CACHE/bin/criclient"
	mkdir -p "$CLIENT_CACHE/bin"
	(
		flock 9
		cd "$REPO_ROOT/tests/clients/criclient" && go build -o "$out" .
	) 9>"$CLIENT_CACHE/.build.lock" >&2 || return 1
	echo "$out"
}

# ------------------------------------------------------------- containerd ---

# containerd_start DIR [CRI-ENABLED]: write DIR/config.toml and start a
# private containerd (socket DIR/c.sock, root, state, runc root, CNI conf
# and IPAM data under DIR); its PID goes to DIR/containerd.pid. With the CRI
# enabled, its default runtime is io.containerd.runc.v2 with BinaryName = the
# runtime under test and the CNI network "hcri" (bridge hcri0). containerd
# 2.x's NRI socket (by default /var/run/nri/nri.sock) is DIR/nri.sock.
containerd_start() {
	local d="$1" cri="${2:-}" disabled='["io.containerd.grpc.v1.cri"]'
	require_cmd containerd
	mkdir -p "$d/root" "$d/state" "$d/runc" "$d/opt" "$d/cni/net.d" "$d/cni/ipam"
	[ -z "$cri" ] || disabled='[]'
	cat >"$d/config.toml" <<-EOF
		version = 2
		root = "$d/root"
		state = "$d/state"
		disabled_plugins = $disabled
		[grpc]
		  address = "$d/c.sock"
		[ttrpc]
		  address = "$d/c.sock.ttrpc"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$d/opt"
		[plugins."io.containerd.nri.v1.nri"]
		  socket_path = "$d/nri.sock"
		  plugin_path = "$d/nri/plugins"
		  plugin_config_path = "$d/nri/conf.d"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_REF"
		  restrict_oom_score_adj = true
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  enable_selinux = ${CONTAINERD_ENABLE_SELINUX:-false}
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "husk"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.husk]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.husk.options]
		        BinaryName = "$CLIENT_RUNTIME"
		        Root = "$d/runc"
		        SystemdCgroup = ${CONTAINERD_SYSTEMD_CGROUP:-false}
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$d/cni/net.d"
		    max_conf_num = 1
		${CONTAINERD_CONFIG_EXTRA:-}
	EOF
	cat >"$d/cni/net.d/10-hcri.conflist" <<-EOF
		{
		  "cniVersion": "1.0.0",
		  "name": "hcri",
		  "plugins": [
		    {
		      "type": "bridge", "bridge": "hcri0", "isGateway": true, "ipMasq": false,
		      "ipam": {
		        "type": "host-local", "dataDir": "$d/cni/ipam",
		        "ranges": [[{"subnet": "10.232.7.0/24"}]]
		      }
		    },
		    {"type": "loopback"}${CNI_EXTRA_PLUGINS:+,
		    $CNI_EXTRA_PLUGINS}
		  ]
		}
	EOF
	# Shim sockets always go to /run/containerd/s/, CNI results to
	# /var/lib/cni/; remember what was there.
	local dir
	for dir in /run/containerd/s /run/containerd/fifo /run/containerd /var/lib/cni/results /var/lib/cni; do
		[ -d "$dir" ] || echo "$dir"
	done >"$d/dirs.created"
	ls -A /run/containerd/s 2>/dev/null >"$d/shim-sockets.before" || true
	ls -A /var/run/netns 2>/dev/null >"$d/netns.before" || true
	containerd --config "$d/config.toml" </dev/null >"$d/containerd.log" 2>&1 3>&- &
	echo $! >"$d/containerd.pid"
	local i
	for ((i = 0; i < 200; i++)); do
		ctr --address "$d/c.sock" version >/dev/null 2>&1 && return 0
		kill -0 "$(cat "$d/containerd.pid")" 2>/dev/null || break
		sleep 0.05
	done
	tail -20 "$d/containerd.log" >&2
	fail "containerd did not come up on $d/c.sock"
}

# containerd_stop DIR: SIGTERM the containerd of DIR by its PID and wait.
containerd_stop() {
	daemon_stop "$1/containerd.pid"
}

# daemon_stop PIDFILE: SIGTERM the daemon whose PID PIDFILE holds, wait for
# it (SIGKILL after 10 s), remove PIDFILE.
daemon_stop() {
	local pid i
	pid="$(cat "$1" 2>/dev/null)" || return 0
	# pid_alive, not kill -0: the daemon is not this shell's child, and a
	# zombie answers kill -0.
	if pid_alive "$pid"; then
		kill -TERM "$pid"
		for ((i = 0; i < 200; i++)); do
			pid_alive "$pid" || break
			sleep 0.05
		done
		pid_alive "$pid" && kill -KILL "$pid"
	fi
	wait "$pid" 2>/dev/null || true
	rm -f "$1"
}

# new_lines BEFORE-FILE DIR: entries of DIR not listed in BEFORE-FILE.
new_lines() {
	comm -13 <(sort "$1" 2>/dev/null) <(ls -A "$2" 2>/dev/null | sort)
}

# leaks_of DIR [CGROUP-NAME...]: print one line per thing the suite in DIR
# left behind, after its daemons stopped: processes (shims, conmon, the
# runtime), mounts, netns, shim sockets,
# CNI results and IPAM leases, the hcri0 bridge and its veths, cgroups.
leaks_of() {
	local d="$1" pid m n cg
	shift
	# Shims, conmon, runtime calls: any process naming the suite dir.
	for pid in $(pgrep -f -- "$d/"); do
		echo "process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	done
	grep -F " $d/" /proc/self/mountinfo | awk '{print "mount " $5}'
	[ -f "$d/netns.before" ] && new_lines "$d/netns.before" /var/run/netns | sed 's/^/netns /'
	[ -f "$d/shim-sockets.before" ] && new_lines "$d/shim-sockets.before" /run/containerd/s |
		sed 's|^|shim socket /run/containerd/s/|'
	grep -lsF '"hcri"' /var/lib/cni/results/* | sed 's/^/CNI result /'
	ls -A "$d/cni/ipam/hcri" 2>/dev/null | grep -v -e '^lock$' -e '^last_reserved_ip' | sed 's/^/IPAM lease /'
	ip link show hcri0 >/dev/null 2>&1 && echo "bridge hcri0"
	for cg in "$@"; do
		find /sys/fs/cgroup/ -maxdepth 4 -type d -name "$cg" 2>/dev/null | sed 's/^/cgroup /'
	done
	return 0
}

# clean_leaks DIR [CGROUP-NAME...]: remove what leaks_of reports (after a
# failure), so one failed suite does not poison the next.
clean_leaks() {
	local d="$1" pid cg f
	shift
	for pid in $(pgrep -f -- "$d/"); do
		kill -KILL "$pid" 2>/dev/null || true
	done
	# Container processes the shims left: whatever is in the suite's cgroups.
	for cg in "$@"; do
		for pid in $(cat /sys/fs/cgroup/pids/"$cg"/cgroup.procs /sys/fs/cgroup/pids/"$cg"/*/cgroup.procs \
			/sys/fs/cgroup/pids/"$cg"/*/*/cgroup.procs 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null || true
		done
	done
	grep -F " $d/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	if [ -f "$d/netns.before" ]; then
		for f in $(new_lines "$d/netns.before" /var/run/netns); do
			umount -l "/var/run/netns/$f" 2>/dev/null || true
			rm -f "/var/run/netns/$f"
		done
	fi
	if [ -f "$d/shim-sockets.before" ]; then
		for f in $(new_lines "$d/shim-sockets.before" /run/containerd/s); do
			rm -f "/run/containerd/s/$f"
		done
	fi
	grep -lsF '"hcri"' /var/lib/cni/results/* | xargs -r rm -f
	ip link delete hcri0 2>/dev/null || true
	remove_created_dirs "$d"
	sleep 0.2
	for cg in "$@"; do
		# Each match with its sub-cgroups, deepest first (a {} inside an
		# -exec sh -c string is replaced by find too, so no nested find).
		find /sys/fs/cgroup/ -maxdepth 4 -depth -type d -name "$cg" 2>/dev/null |
			while read -r top; do
				find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null || true
			done
	done
}

# assert_nothing_left DIR [CGROUP-NAME...]: fail (after cleaning up) with
# the list of leaks, if any; on success remove DIR.
assert_nothing_left() {
	local d="$1" leaks
	# A shim that has just been told to go removes its socket as it exits
	# (containerd 2.x answers the pod's removal before that): give what is
	# already on its way out a few seconds.
	wait_until 10 no_leaks "$@" || true
	leaks="$(leaks_of "$@")"
	if [ -n "$leaks" ]; then
		clean_leaks "$@"
		fail "left behind: $leaks"
		return 1
	fi
	remove_created_dirs "$d"
	rm -rf "$d"
}

# no_leaks DIR [CGROUP-NAME...]: leaks_of reports nothing.
no_leaks() {
	[ -z "$(leaks_of "$@")" ]
}

# remove_created_dirs DIR: rmdir the shared directories containerd made for
# the suite of DIR (/run/containerd/s, /var/lib/cni/results, ...) if empty.
remove_created_dirs() {
	local dir
	for dir in $(cat "$1/dirs.created" 2>/dev/null); do
		rmdir "$dir" 2>/dev/null || true
	done
}

# remove_cgroup_parent NAME: rmdir the parent cgroup NAME the clients made
# (ctr's /NAMESPACE, the CRI's pod parent) in every hierarchy; runtimes
# remove only the container's own cgroup. A parent that still holds a
# container's cgroup stays, and leaks_of reports it.
remove_cgroup_parent() {
	local d
	for d in /sys/fs/cgroup/*/"$1" /sys/fs/cgroup/unified/"$1"; do
		[ ! -d "$d" ] || rmdir "$d" 2>/dev/null || true
	done
	return 0
}

# wait_until SECONDS COMMAND...: retry COMMAND every 0.1s until it succeeds.
wait_until() {
	local secs="$1" deadline
	shift
	deadline=$((SECONDS + secs))
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}
