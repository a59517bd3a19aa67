#!/usr/bin/env bash
# A standalone kubelet (no API server: static pods from a directory) on a
# private containerd whose CRI runs the runtime under test; loaded by
# kubelet.bats, on the host and in the VM lane's setup a.
#
# kubelet writes outside its --root-dir, and machine-wide sysctls; the suite
# keeps all of it private or takes it back:
#   - it runs in its own mount namespace (unshare -m, propagation slave, so
#     it still sees containerd's netns mounts) where files are bound over
#     /proc/sys/{vm/overcommit_memory,kernel/panic,kernel/panic_on_oops}
#     (it sets them to 1, 10 and 1 with no warn-only option) and a suite
#     directory over /var/lib/kubelet (its device-plugins socket dir); with
#     an API server (kubeapi.bash) its root-dir is a shared mount, so that
#     the pods' secret and projected volumes reach containerd;
#   - pod logs go to the suite dir (podLogsDir), volume plugins too
#     (volumePluginDir); only the links of /var/log/containers are shared:
#     the suite removes those of its pods' namespace (and the directory,
#     and /var/lib/kubelet, when it made them);
#   - its cgroups: the QoS tree under a cgroupRoot of the suite's own with
#     the cgroupfs driver (the systemd driver's kubepods.slice in the guest);
#   - no iptables chains (makeIPTablesUtilChains: false); the KUBE-* ones
#     are listed before and after all the same.
#
# Environment knobs (besides helpers.bash's):
#   KUBELET              the kubelet binary (default: built by build.sh)
#   KUBELET_CGROUP_DRIVER  cgroupfs (default) or systemd

# In the VM lane's setup a (systemd, pure cgroup v2) the suite runs as a
# node there is set up: kubelet's systemd driver, containerd 2.x (prebuilt
# into HUSK_TOOLS_DIR) with SystemdCgroup = true.
if [ "${HUSK_VM_SETUP:-}" = a ]; then
	: "${KUBELET_CGROUP_DRIVER:=systemd}" "${CONTAINERD_SYSTEMD_CGROUP:=true}"
	: "${HUSK_CONTAINERD_DIR:=$HUSK_TOOLS_DIR/containerd2}"
	export CONTAINERD_SYSTEMD_CGROUP HUSK_CONTAINERD_DIR
fi

# shellcheck source=helpers.bash
source "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"

KUBELET_CGROUP_DRIVER="${KUBELET_CGROUP_DRIVER:-cgroupfs}"
# The namespace of every static pod of the suite: its /var/log/containers
# links carry it.
KUBE_NS="husk-kubelet"
KUBE_NODE="hkube"

# kubelet_binary prints the kubelet to run: $KUBELET, the one prebuilt in
# HUSK_TOOLS_DIR (the VM lane), or build.sh's (cached; minutes the first time).
kubelet_binary() {
	if [ -n "${KUBELET:-}" ]; then
		echo "$KUBELET"
	elif [ -n "${HUSK_TOOLS_DIR:-}" ] && [ -x "$HUSK_TOOLS_DIR/kubelet" ]; then
		echo "$HUSK_TOOLS_DIR/kubelet"
	else
		local dir
		dir="$("$REPO_ROOT/tests/clients/build.sh" kubelet)" || return 1
		echo "$dir/kubelet"
	fi
}

# kube_cgroup_root prints the cgroupfs driver's cgroupRoot for DIR's suite.
kube_cgroup_root() {
	echo "/hkube-$(basename "$1")"
}

# kube_cgroup_dirs DIR: the directories of the suite's cgroupRoot, one per
# hierarchy (v1 controllers, cgroup2), existing or not.
kube_cgroup_dirs() {
	local root h
	root="$(kube_cgroup_root "$1")"
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "/sys/fs/cgroup$root"
		return 0
	fi
	for h in /sys/fs/cgroup/*/; do
		[ -L "${h%/}" ] || echo "${h%/}$root"
	done
}

# iptables_chains: every "table chain" of iptables and ip6tables.
iptables_chains() {
	local cmd t
	for cmd in iptables ip6tables; do
		command -v "$cmd" >/dev/null || continue
		for t in filter nat mangle; do
			"$cmd" -t "$t" -S 2>/dev/null | awk -v c="$cmd" -v t="$t" '$1 == "-N" {print c, t, $2}'
		done
	done | sort
}

# kubelet_start DIR [KUBECONFIG]: a kubelet for the containerd of DIR
# (started by containerd_start DIR cri); PID in DIR/kubelet.pid, log in
# DIR/kubelet.log. With KUBECONFIG it also registers the node with that API
# server and runs its pods (kubeapi.bash), besides the static ones.
kubelet_start() {
	local d="$1" k="$1/kubelet" bin port cg api=()
	[ -z "${2:-}" ] || api=(--kubeconfig "$2")
	bin="$(kubelet_binary)" || fail "no kubelet (tests/clients/build.sh kubelet failed)"
	mkdir -p "$k/root" "$k/pki" "$k/plugins" "$k/var-lib-kubelet" "$k/sysctl" "$k/logs" "$d/manifests"
	port=$((20000 + $$ % 20000))
	echo "$port" >"$k/port"
	if [ "$KUBELET_CGROUP_DRIVER" = cgroupfs ]; then
		for cg in $(kube_cgroup_dirs "$d"); do
			mkdir -p "$cg"
		done
	fi
	iptables_chains >"$k/chains.before"
	[ -d /var/lib/kubelet ] || { mkdir /var/lib/kubelet && touch "$k/var-lib-kubelet.created"; }
	[ -d /var/log/containers ] || touch "$k/var-log-containers.absent"
	cat >"$k/config.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		staticPodPath: $d/manifests
		fileCheckFrequency: 1s
		syncFrequency: 5s
		containerRuntimeEndpoint: unix://$d/c.sock
		cgroupDriver: $KUBELET_CGROUP_DRIVER
		$([ "$KUBELET_CGROUP_DRIVER" = cgroupfs ] && echo "cgroupRoot: $(kube_cgroup_root "$d")")
		failSwapOn: false
		makeIPTablesUtilChains: false
		failCgroupV1: false
		address: 127.0.0.1
		port: $port
		readOnlyPort: $((port + 1))
		healthzPort: 0
		authentication:
		  anonymous: {enabled: true}
		  webhook: {enabled: false}
		authorization: {mode: AlwaysAllow}
		podLogsDir: $k/logs
		volumePluginDir: $k/plugins
		evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
	EOF
	local f
	for f in vm/overcommit_memory kernel/panic kernel/panic_on_oops; do
		cat "/proc/sys/$f" >"$k/sysctl/${f#*/}"
		echo "$f $(cat "/proc/sys/$f")"
	done >"$k/sysctl.host"
	# The binds exist only in kubelet's mount namespace, whose mounts are
	# all slaves of the host's (unshare's propagation slave) but one: with an
	# API server, kubelet mounts the pods' secret and projected volumes
	# (tmpfs) under its root-dir, and containerd, in the host's namespace,
	# binds them into the containers. There the root-dir is a shared mount
	# of its own, a peer of the host's, so that those mounts reach the host
	# (kubelet_stop unmounts it).
	local prop=slave
	if [ ${#api[@]} -gt 0 ]; then
		mount --bind "$k/root" "$k/root" && mount --make-shared "$k/root" || fail "cannot share $k/root"
		touch "$k/root.shared"
		prop=unchanged
	fi
	unshare --mount --propagation "$prop" sh -c '
		k="$1"; shift
		if [ -e "$k/root.shared" ]; then
			findmnt -rn -o TARGET | while read -r m; do
				[ "$m" = "$k/root" ] || mount --make-slave "$m" 2>/dev/null || true
			done
		fi
		mount --bind "$k/sysctl/overcommit_memory" /proc/sys/vm/overcommit_memory &&
		mount --bind "$k/sysctl/panic" /proc/sys/kernel/panic &&
		mount --bind "$k/sysctl/panic_on_oops" /proc/sys/kernel/panic_on_oops &&
		mount --bind "$k/var-lib-kubelet" /var/lib/kubelet &&
		exec "$@"' sh "$k" \
		"$bin" --config "$k/config.yaml" --root-dir "$k/root" --cert-dir "$k/pki" \
		--hostname-override "$KUBE_NODE" "${api[@]}" --v=2 </dev/null >"$d/kubelet.log" 2>&1 3>&- &
	echo $! >"$d/kubelet.pid"
	wait_until 120 kube_pods >/dev/null || {
		tail -30 "$d/kubelet.log" >&2
		fail "kubelet did not answer on 127.0.0.1:$((port + 1))"
	}
}

# kubelet_stop DIR: SIGTERM DIR's kubelet by its PID and wait; unmount its
# shared root-dir (and what kubelet left mounted there), if it had one.
kubelet_stop() {
	daemon_stop "$1/kubelet.pid"
	if [ -e "$1/kubelet/root.shared" ]; then
		umount -R "$1/kubelet/root" && rm -f "$1/kubelet/root.shared"
	fi
}

# http_get URL: the body of an http://HOST:PORT/PATH URL answered 200: curl,
# or bash's /dev/tcp where there is none (the VM lane's guest, whose static
# busybox wget crashes).
http_get() {
	if command -v curl >/dev/null; then
		curl -fsS --max-time 10 "$1"
		return
	fi
	local rest="${1#http://}" hostport path fd resp
	hostport="${rest%%/*}" path="/${rest#*/}"
	[ "$rest" != "$hostport" ] || path=/
	exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport##*:}" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$hostport" >&"$fd"
	resp="$(timeout 10 cat <&"$fd")"
	exec {fd}>&-
	[[ "$resp" == "HTTP/1."?" 200 "* ]] || return 1
	printf '%s\n' "${resp#*$'\r\n\r\n'}"
}

# kube_get PATH: GET PATH from kubelet's read-only port.
kube_get() {
	http_get "http://127.0.0.1:$(($(cat "$SUITE_DIR/kubelet/port") + 1))$1"
}

# kube_pods: kubelet's pods (GET /pods: a standalone kubelet fills in the
# status of static pods there).
kube_pods() {
	kube_get /pods
}

# kube_pod NAME: the pod NAME (a static pod is named NAME-<node>) as JSON.
kube_pod() {
	kube_pods | jq -e --arg n "$1-$KUBE_NODE" '.items[] | select(.metadata.name == $n)'
}

# pod_add NAME YAML: write the static pod manifest NAME (the YAML's spec,
# indented by two) in the suite's namespace, with the busybox image.
pod_add() {
	local name="$1" spec="$2"
	{
		printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n' "$name" "$KUBE_NS"
		sed 's/^/  /' <<<"$spec"
	} >"$SUITE_DIR/manifests/.$name.yaml"
	mv "$SUITE_DIR/manifests/.$name.yaml" "$SUITE_DIR/manifests/$name.yaml"
}

# pod_del NAME: remove the manifest; kubelet stops the pod.
pod_del() {
	rm -f "$SUITE_DIR/manifests/$1.yaml"
}

# pod_gone NAME: kubelet lists no pod NAME and no container of it runs.
pod_gone() {
	! kube_pod "$1" >/dev/null 2>&1
}

# jq_pod NAME FILTER: FILTER applied to the pod NAME; fails when it is
# false or null.
jq_pod() {
	kube_pod "$1" 2>/dev/null | jq -e "$2" >/dev/null 2>&1
}

# wait_pod NAME SECONDS FILTER: until the pod NAME satisfies FILTER; on a
# timeout, fail with the pod's status.
wait_pod() {
	wait_until "$2" jq_pod "$1" "$3" ||
		fail "pod $1: no ($3) after $2 s: $(kube_pod "$1" 2>/dev/null | jq -c .status)"
}

# ctr_id POD CONTAINER: the CRI id of the container (its current attempt).
# A kubelet's status of a pod it has just started can briefly go back to
# ContainerCreating (two syncs of a new pod race), or name a container
# the suite's containerd does not run yet: wait for an id that containerd
# knows with a process.
ctr_id() {
	local id deadline=$((SECONDS + 60))
	until id="$(container_id_of "$1" "$2")" && id="${id#containerd://}" && [ -n "$id" ] &&
		cri status "$id" 2>/dev/null | jq -e '.info.pid > 0' >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "pod $1 has no running container $2: $(kube_pod "$1" | jq -c .status)" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "$id"
}

# container_id_of POD CONTAINER: kubelet's containerID of CONTAINER, if any.
container_id_of() {
	kube_pod "$1" 2>/dev/null | jq -er --arg c "$2" \
		'.status.containerStatuses[] | select(.name == $c and .state.running) | .containerID // empty'
}

# ctr_pid POD CONTAINER: the host pid of the container's process.
ctr_pid() {
	cri status "$(ctr_id "$1" "$2")" | jq -r .info.pid
}

# cri ARGS: criclient on the suite's containerd.
cri() {
	timeout -k 5 "$CLIENT_TIMEOUT" "$CRICLIENT" -a "$SUITE_DIR/c.sock" "$@"
}

# kube_leaks DIR: what kubelet left outside the suite dir after its pods
# were removed and it stopped: pod cgroups, its cgroup tree, iptables
# chains, /var/log/containers links, files in /var/lib/kubelet, and the
# sysctls it must not have changed.
kube_leaks() {
	local d="$1" k="$1/kubelet" cg
	if [ "$KUBELET_CGROUP_DRIVER" = cgroupfs ]; then
		for cg in $(kube_cgroup_dirs "$d"); do
			[ ! -d "$cg" ] || find "$cg" -mindepth 1 -type d -name 'pod*' | sed 's/^/pod cgroup /'
		done
	else
		find /sys/fs/cgroup/kubepods.slice -mindepth 1 -type d -name '*-pod*.slice' 2>/dev/null |
			sed 's/^/pod cgroup /'
	fi
	comm -13 "$k/chains.before" <(iptables_chains) | grep ' KUBE-' | sed 's/^/iptables chain /'
	ls /var/log/containers 2>/dev/null | grep -F "_${KUBE_NS}_" | sed 's|^|link /var/log/containers/|'
	[ -f "$k/var-lib-kubelet.created" ] && find /var/lib/kubelet -mindepth 1 | sed 's/^/file /'
	local f v
	while read -r f v; do
		[ "$(cat "/proc/sys/$f")" = "$v" ] || echo "sysctl $f: $v changed to $(cat "/proc/sys/$f")"
	done <"$k/sysctl.host"
	return 0
}

# no_pod_cgroups DIR: kubelet has removed every pod cgroup of DIR's suite.
no_pod_cgroups() {
	! kube_leaks "$1" | grep -q '^pod cgroup'
}

# kube_stop_all DIR [STOP...]: once DIR's pods are gone, stop kubelet, then
# run STOP (more daemons to stop), then stop containerd, and fail with
# whatever the suite left behind.
kube_stop_all() {
	local d="$1" leaks
	shift
	# kubelet removes the pod cgroups once the pods are gone.
	wait_until 60 no_pod_cgroups "$d" || true
	# Its container GC removes the /var/log/containers links (slowly in
	# the VM lane); what it has not removed yet, the suite takes back.
	wait_until 60 bash -c "! ls /var/log/containers 2>/dev/null | grep -qF _${KUBE_NS}_" || true
	kubelet_stop "$d"
	[ $# -eq 0 ] || "$@"
	containerd_stop "$d"
	ip link delete hcri0 2>/dev/null || true
	# Pod cgroups and sysctls are never taken back: they must be right; the
	# rest of kubelet's traces must be gone once the suite took them back.
	leaks="$(kube_leaks "$d" | grep -e '^pod cgroup' -e '^sysctl' || true)"
	kube_cleanup "$d"
	leaks="$leaks$(kube_leaks "$d")"
	[ -z "$leaks" ] || fail "kubelet left: $leaks"
	assert_nothing_left "$d" "$(basename "$(kube_cgroup_root "$d")")"
}

# kube_cleanup DIR: take back what kubelet made outside the suite dir (its
# cgroup tree, new KUBE-* chains, links, /var/lib/kubelet if the suite made
# it); the containerd side is clean_leaks'.
kube_cleanup() {
	local d="$1" k="$1/kubelet" cg line
	if [ "$KUBELET_CGROUP_DRIVER" = cgroupfs ]; then
		for cg in $(kube_cgroup_dirs "$d"); do
			[ ! -d "$cg" ] || find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		done
	else
		# The QoS slices systemd keeps for kubelet.
		systemctl stop kubepods.slice 2>/dev/null || true
	fi
	comm -13 "$k/chains.before" <(iptables_chains) | grep ' KUBE-' | while read -r line; do
		set -- $line
		"$1" -t "$2" -F "$3" 2>/dev/null || true
		"$1" -t "$2" -X "$3" 2>/dev/null || true
	done
	ls /var/log/containers 2>/dev/null | grep -F "_${KUBE_NS}_" | sed 's|^|/var/log/containers/|' | xargs -r rm -f
	[ ! -f "$k/var-log-containers.absent" ] || rmdir /var/log/containers 2>/dev/null || true
	if [ -f "$k/var-lib-kubelet.created" ]; then
		rm -rf /var/lib/kubelet
	fi
	return 0
}

# userns_skip_reason: why a hostUsers: false pod cannot run here (nothing
# when it can): containerd 2.x asks the runtime's `features` for idmapped
# mounts and reports user namespaces to kubelet only then (containerd 1.6's
# CRI has none); the emptyDir is a tmpfs, and idmapped tmpfs mounts came in
# Linux 6.3 (the VM lane's guest runs 6.1).
userns_skip_reason() {
	local kv
	if ! containerd --version | grep -q ' v\?[2-9]\.'; then
		echo "containerd 1.x: its CRI has no user namespaces (hostUsers: false needs containerd 2.x)"
	elif ! "$CLIENT_RUNTIME" features 2>/dev/null | jq -e '.linux.mountExtensions.idmap.enabled' >/dev/null; then
		echo "$CLIENT_RUNTIME reports no idmapped mounts in \`features\` ($("$CLIENT_RUNTIME" --version | head -1)): containerd gives kubelet no user-namespace support for it"
	else
		kv="$(uname -r)"
		kv="${kv%%-*}"
		[ "$(printf '%s\n6.3\n' "${kv%.*}" | sort -V | head -1)" = 6.3 ] ||
			echo "kernel $(uname -r): idmapped tmpfs mounts (the emptyDir) need Linux 6.3"
	fi
}

# userns_facts POD HOSTDIR: what a hostUsers: false pod POD shows, one
# "what: value" line each, with the host ids relative to the pod's base id
# (each pod has its own range), so that two runtimes' pods compare equal
# line by line. POD has the containers main (root, the emptyDir at /data,
# HOSTDIR at /host) and user (uid and gid 1000, the emptyDir at /data); the
# files each writes there, as seen inside and on the host; a file of the
# host's 0:0 as seen inside; the volumes' mount options inside; and the
# service-account files, when the pod has them, as user sees them.
userns_facts() {
	local pod="$1" host="$2" main user base pid c uid sa=/var/run/secrets/kubernetes.io/serviceaccount
	main="$(ctr_id "$pod" main)" && user="$(ctr_id "$pod" user)" || return 1
	uid="$(kube_pod "$pod" | jq -r .metadata.uid)"
	base="$(cri exec "$main" cat /proc/self/uid_map | awk '{print $2}')" || return 1
	echo "uid_map: $(cri exec "$main" cat /proc/self/uid_map | awk -v b="$base" '{print $1, $2 - b, $3}')"
	echo "gid_map: $(cri exec "$main" cat /proc/self/gid_map | awk -v b="$base" '{print $1, $2 - b, $3}')"
	for c in main user; do
		echo "$c id: $(cri exec "$(ctr_id "$pod" "$c")" id)"
		pid="$(ctr_pid "$pod" "$c")" || return 1
		awk -v c="$c" -v b="$base" '/^(Uid|Gid|Groups):/ {
			printf "%s host %s", c, $1; for (i = 2; i <= NF; i++) printf " %+d", $i - b; print ""
		}' "/proc/$pid/status"
	done
	cri exec "$main" sh -c 'echo m >/data/main && echo m >/host/main && mkdir /data/d /host/d' || return 1
	cri exec "$user" sh -c 'echo u >/data/user' || return 1
	echo from-host >"$host/from-host"
	echo "inside: $(cri exec "$main" stat -c '%n %u:%g %a' /data /data/main /data/user /data/d /host/main /host/d /host/from-host | tr '\n' ' ')"
	echo "on the host: $(cd "$SUITE_DIR/kubelet/root/pods/$uid/volumes/kubernetes.io~empty-dir/scratch" &&
		stat -c '%n %u:%g %a' . main user d | tr '\n' ' ') $(cd "$host" && stat -c '%n %u:%g %a' main d | tr '\n' ' ')"
	for c in /data /host; do
		echo "mount $c: $(cri exec "$main" awk -v m="$c" '$5 == m {print $6}' /proc/self/mountinfo)"
	done
	if cri exec "$user" test -d "$sa"; then
		echo "service account: $(cri exec "$user" stat -L -c '%n %u:%g %a' "$sa/token" "$sa/ca.crt" "$sa/namespace" | tr '\n' ' ')"
		echo "mount $sa: $(cri exec "$user" awk -v m="$sa" '$5 == m {print $6}' /proc/self/mountinfo)"
		echo "token readable by user: $(cri exec "$user" cat "$sa/token" | awk -F. 'NF == 3 {print "yes"}')"
	fi
}
