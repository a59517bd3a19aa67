#!/usr/bin/env bats
# A real kubelet (built from the Go module proxy by build.sh, cached) runs
# static pods on a private containerd whose CRI runtime is the runtime under
# test: HUSK_CLIENT_RUNTIME=/usr/sbin/runc is the reference, husk the
# subject, with the same manifests. Probes are execs, restarts are
# create/start/delete, limits are the container's cgroup.

load kubelet

setup_file() {
	[ "${HUSK_VM_SETUP:-a}" = a ] || skip "the lane runs kubelet in setup a (systemd)"
	runtime_ready
	export SUITE_DIR CRICLIENT
	SUITE_DIR="$(new_suite_dir)"
	CRICLIENT="$(build_criclient)" || fail "cannot build tests/clients/criclient"
	kubelet_binary >/dev/null || fail "cannot build kubelet (tests/clients/build.sh kubelet)"
	containerd_start "$SUITE_DIR" cri
	local tar
	tar="$(build_image_tar)" || fail "cannot build the busybox image"
	ctr --address "$SUITE_DIR/c.sock" -n k8s.io images import "$tar" >/dev/null ||
		fail "ctr -n k8s.io images import $tar failed"
	kubelet_start "$SUITE_DIR"
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	rm -f "$SUITE_DIR"/manifests/*.yaml
	kubelet_stop "$SUITE_DIR"
	containerd_stop "$SUITE_DIR"
	clean_leaks "$SUITE_DIR" "$(basename "$(kube_cgroup_root "$SUITE_DIR")")"
	kube_cleanup "$SUITE_DIR"
	rm -rf "$SUITE_DIR"
}

# Every test removes its pods and waits until kubelet has stopped them.
teardown() {
	local m
	[ -e "$SUITE_DIR/kubelet.pid" ] || return 0 # the last test stopped it
	for m in "$SUITE_DIR"/manifests/*.yaml; do
		[ -e "$m" ] || continue
		rm -f "$m"
		wait_until 90 pod_gone "$(basename "$m" .yaml)" || true
	done
}

# A container spec with the suite's image; ARGS is a YAML flow list.
ctr_yaml() {
	printf -- '- name: %s\n  image: %s\n  imagePullPolicy: Never\n  command: %s\n' "$1" "$IMAGE_REF" "$2"
}

@test "kubelet: a static pod starts, its limits are in the container's cgroup, its logs reach podLogsDir" {
	local pid cg line dir f
	pod_add limits "terminationGracePeriodSeconds: 1
containers:
$(ctr_yaml main '[sh, -c, "echo hello-from-$(hostname); exec sleep 3600"]')
  resources:
    limits: {memory: 64Mi, cpu: 500m}
    requests: {memory: 32Mi, cpu: 250m}"
	wait_pod limits 120 '.status.containerStatuses[0] | .state.running and .containerID'
	pid="$(ctr_pid limits main)"
	pid_alive "$pid" || fail "container pid $pid"
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		line="$(sed -n 's/^0:://p' "/proc/$pid/cgroup")"
		dir=/sys/fs/cgroup$line
		[ "$(cat "$dir/memory.max")" = 67108864 ] || fail "memory.max of $dir: $(cat "$dir/memory.max")"
		[ "$(cat "$dir/cpu.max")" = "50000 100000" ] || fail "cpu.max of $dir: $(cat "$dir/cpu.max")"
	else
		line="$(sed -n 's/^[0-9]*:memory://p' "/proc/$pid/cgroup")"
		dir=/sys/fs/cgroup/memory$line
		[ "$(cat "$dir/memory.limit_in_bytes")" = 67108864 ] || fail "memory limit of $dir: $(cat "$dir/memory.limit_in_bytes")"
		line="$(sed -n 's/^[0-9]*:\(cpu\|cpu,cpuacct\)://p' "/proc/$pid/cgroup")"
		[ "$(cat "/sys/fs/cgroup/cpu$line/cpu.cfs_quota_us")" = 50000 ] || fail "cpu quota of $line"
		[ "$(cat "/sys/fs/cgroup/cpu$line/cpu.shares")" = 256 ] || fail "cpu.shares of $line"
	fi
	[[ "$line" == *pod* ]] || fail "container cgroup $line is not under its pod's cgroup"
	# Logs: podLogsDir/<ns>_<pod>_<uid>/<container>/0.log in the CRI format,
	# and a link in /var/log/containers.
	f="$(ls "$SUITE_DIR"/kubelet/logs/"${KUBE_NS}"_limits-"${KUBE_NODE}"_*/main/0.log)" || fail "no log file"
	wait_until 20 grep -q "stdout F hello-from-limits-$KUBE_NODE" "$f" || fail "log $f: $(cat "$f")"
	ls /var/log/containers/limits-"${KUBE_NODE}"_"${KUBE_NS}"_main-*.log >/dev/null ||
		fail "no link in /var/log/containers"
}

@test "kubelet: exec liveness and readiness probes: passing ones keep the pod ready, failing ones make it unready or restart it" {
	pod_add probes "terminationGracePeriodSeconds: 1
containers:
$(ctr_yaml good '[sh, -c, "touch /tmp/ok; exec sleep 3600"]')
  livenessProbe: {exec: {command: [cat, /tmp/ok]}, periodSeconds: 1, failureThreshold: 2}
  readinessProbe: {exec: {command: [cat, /tmp/ok]}, periodSeconds: 1}
$(ctr_yaml unready '[sleep, "3600"]')
  readinessProbe: {exec: {command: [sh, -c, 'exit 1']}, periodSeconds: 1}
$(ctr_yaml unlive '[sleep, "3600"]')
  livenessProbe: {exec: {command: [sh, -c, 'exit 3']}, periodSeconds: 1, failureThreshold: 1}"
	wait_pod probes 120 '.status.containerStatuses[] | select(.name == "good") | .ready'
	wait_pod probes 120 '.status.containerStatuses[] | select(.name == "unlive") | .restartCount >= 1'
	jq_pod probes '.status.containerStatuses[] | select(.name == "good") | .restartCount == 0' ||
		fail "good restarted: $(kube_pod probes | jq -c .status.containerStatuses)"
	jq_pod probes '.status.containerStatuses[] | select(.name == "unready") | (.ready | not) and .restartCount == 0 and .state.running' ||
		fail "unready: $(kube_pod probes | jq -c .status.containerStatuses)"
	jq_pod probes '.status.conditions[] | select(.type == "Ready") | .status == "False"' ||
		fail "pod Ready with an unready container: $(kube_pod probes | jq -c .status.conditions)"
	# The failed liveness probe killed the old attempt; kubelet says why.
	grep -q 'Probe failed.*probeType="Liveness".*probes-'"$KUBE_NODE" "$SUITE_DIR/kubelet.log" ||
		fail "kubelet logged no failed liveness probe"
}

@test "kubelet: a container killed with SIGKILL is restarted" {
	local pid
	pod_add restart "terminationGracePeriodSeconds: 1
containers:
$(ctr_yaml main '[sleep, "3600"]')"
	local id code
	wait_pod restart 120 '.status.containerStatuses[0] | .state.running and .containerID'
	id="$(ctr_id restart main)" || fail "no running container main in pod restart"
	pid="$(cri status "$id" | jq -r .info.pid)"
	kill -KILL "$pid"
	wait_pod restart 120 '.status.containerStatuses[0] | .restartCount == 1 and .state.running'
	[ "$(ctr_pid restart main)" != "$pid" ] || fail "same pid after the restart"
	# The exit the runtime reported for the killed container: 137, in
	# kubelet's lastState, or (kubelet's status can lag under load) in the
	# CRI's record of that container.
	jq_pod restart '.status.containerStatuses[0].lastState.terminated.exitCode == 137' && return 0
	code="$(cri status "$id" | jq -r .exitCode)"
	[ "$code" = 137 ] || fail "the killed container's exit: '$code' in the CRI, lastState $(kube_pod restart | jq -c '.status.containerStatuses[0].lastState')"
}

@test "kubelet: init containers run in order before the app container; an emptyDir is shared" {
	local id
	pod_add init "terminationGracePeriodSeconds: 1
volumes: [{name: scratch, emptyDir: {}}]
initContainers:
$(ctr_yaml first '[sh, -c, "echo first >> /data/order"]')
  volumeMounts: [{name: scratch, mountPath: /data}]
$(ctr_yaml second '[sh, -c, "echo second >> /data/order"]')
  volumeMounts: [{name: scratch, mountPath: /data}]
containers:
$(ctr_yaml main '[sh, -c, "cat /data/order; exec sleep 3600"]')
  volumeMounts: [{name: scratch, mountPath: /data}]"
	wait_pod init 120 '.status.containerStatuses[0] | .state.running and .containerID'
	jq_pod init '[.status.initContainerStatuses[] | .state.terminated.exitCode] == [0, 0]' ||
		fail "init containers: $(kube_pod init | jq -c .status.initContainerStatuses)"
	id="$(ctr_id init main)"
	run -0 cri exec "$id" cat /data/order
	[ "$output" = "$(printf 'first\nsecond')" ] || fail "order: $output"
	# The emptyDir is a directory of kubelet's root-dir, bound in.
	run -0 cri exec "$id" sh -c 'echo from-main > /data/main'
	[ "$(cat "$SUITE_DIR"/kubelet/root/pods/*/volumes/kubernetes.io~empty-dir/scratch/main)" = from-main ] ||
		fail "the emptyDir is not under kubelet's root-dir"
}

@test "kubelet: two containers of a pod share its network and IPC namespaces; the pod is reachable over the CNI bridge" {
	local a b pod_ip ns
	pod_add shared "terminationGracePeriodSeconds: 1
containers:
$(ctr_yaml web '[sh, -c, "mkdir -p /www && echo served-by-web > /www/index.html && exec httpd -f -p 8080 -h /www"]')
$(ctr_yaml client '[sleep, "3600"]')"
	wait_pod shared 120 '[.status.containerStatuses[] | .state.running and .containerID] | length == 2 and all'
	a="$(ctr_pid shared web)" b="$(ctr_pid shared client)"
	for ns in net ipc uts; do
		[ "$(stat -L -c %i "/proc/$a/ns/$ns")" = "$(stat -L -c %i "/proc/$b/ns/$ns")" ] ||
			fail "web and client are in different $ns namespaces"
	done
	[ "$(stat -L -c %i "/proc/$a/ns/pid")" != "$(stat -L -c %i "/proc/$b/ns/pid")" ] ||
		fail "the containers share a pid namespace (shareProcessNamespace is off)"
	# Over loopback inside the pod's netns, and from the host over hcri0.
	wait_until 30 cri exec "$(ctr_id shared client)" wget -qO- http://127.0.0.1:8080/ >/dev/null ||
		fail "client cannot reach web on 127.0.0.1:8080"
	run -0 cri exec "$(ctr_id shared client)" wget -qO- http://127.0.0.1:8080/
	[ "$output" = served-by-web ] || fail "client got: $output"
	# IPC: the pod's /dev/shm is one tmpfs, shared with the IPC namespace.
	run -0 cri exec "$(ctr_id shared web)" sh -c 'echo shm-of-web > /dev/shm/x'
	run -0 cri exec "$(ctr_id shared client)" cat /dev/shm/x
	[ "$output" = shm-of-web ] || fail "client's /dev/shm/x: $output"
	pod_ip="$(kube_pod shared | jq -r .status.podIP)"
	[[ "$pod_ip" == 10.232.7.* ]] || fail "pod IP $pod_ip not from the CNI range"
	run -0 http_get "http://$pod_ip:8080/"
	[ "$output" = served-by-web ] || fail "host got: $output"
}

@test "kubelet: securityContext: runAsUser/runAsGroup, readOnlyRootFilesystem, capabilities add/drop, privileged" {
	local id
	pod_add secctx "terminationGracePeriodSeconds: 1
containers:
$(ctr_yaml user '[sleep, "3600"]')
  securityContext:
    runAsUser: 1000
    runAsGroup: 1000
    readOnlyRootFilesystem: true
    capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
$(ctr_yaml priv '[sleep, "3600"]')
  securityContext: {privileged: true}"
	wait_pod secctx 120 '[.status.containerStatuses[] | .state.running and .containerID] | length == 2 and all'
	id="$(ctr_id secctx user)"
	run -0 cri exec "$id" id -u
	[ "$output" = 1000 ] || fail "uid: $output"
	run -0 cri exec "$id" id -g
	[ "$output" = 1000 ] || fail "gid: $output"
	run ! cri exec "$id" touch /rootfs-write
	run -0 cri exec "$id" sh -c 'grep CapBnd /proc/self/status'
	# CAP_NET_BIND_SERVICE is bit 10: the bounding set holds only it.
	[ "$output" = "CapBnd:	0000000000000400" ] || fail "$output"
	# Privileged: every capability, every host device, mount(2) allowed.
	id="$(ctr_id secctx priv)"
	run -0 cri exec "$id" sh -c 'grep CapEff /proc/self/status'
	[ "$output" = "CapEff:	$(grep CapBnd /proc/self/status | cut -f2)" ] || fail "$output"
	run -0 cri exec "$id" ls /dev
	assert_contains "$output" "$(ls /dev | grep -m1 -E '^(vda|sda|nvme0n1|loop0)$')"
	run -0 cri exec "$id" sh -c 'mkdir -p /tmp/m && mount -t tmpfs priv-tmpfs /tmp/m && grep priv-tmpfs /proc/self/mounts'
	assert_contains "$output" "priv-tmpfs /tmp/m tmpfs rw"
}

@test "kubelet: pod removal sends SIGTERM, then SIGKILL after the grace period" {
	local pid out="$SUITE_DIR/term"
	mkdir -p "$out"
	# It ignores SIGTERM and would loop forever: only a SIGKILL ends it.
	cat >"$out/term.sh" <<-'EOF'
		trap 'echo TERM >>/out/term.log; i=0; while :; do i=$((i + 1)); echo alive-$i >>/out/term.log; sleep 1; done' TERM
		echo up >>/out/term.log
		while :; do sleep 1; done
	EOF
	pod_add term "terminationGracePeriodSeconds: 4
volumes: [{name: out, hostPath: {path: $out, type: Directory}}]
containers:
$(ctr_yaml main '[sh, /out/term.sh]')
  volumeMounts: [{name: out, mountPath: /out}]"
	wait_pod term 120 '.status.containerStatuses[0] | .state.running and .containerID'
	wait_until 20 grep -q up "$out/term.log" || fail "the container did not start"
	pid="$(ctr_pid term main)"
	pod_del term
	wait_until 60 bash -c "! kill -0 $pid 2>/dev/null" || fail "pid $pid still alive a minute after the pod was removed"
	grep -q '^TERM$' "$out/term.log" || fail "no SIGTERM: $(cat "$out/term.log")"
	grep -q '^alive-2$' "$out/term.log" || fail "killed before the grace period: $(cat "$out/term.log")"
	wait_until 60 pod_gone term || fail "pod term still listed"
}

@test "kubelet: hostUsers: false: a user namespace of 65536 ids, idmapped emptyDir and hostPath volumes" {
	local id uid pid base sb out="$SUITE_DIR/userns" f
	local why
	why="$(userns_skip_reason)"
	[ -z "$why" ] || skip "$why"
	mkdir -p "$out"
	pod_add userns "terminationGracePeriodSeconds: 1
hostUsers: false
securityContext: {fsGroup: 2000}
volumes:
- {name: scratch, emptyDir: {}}
- {name: host, hostPath: {path: $out, type: Directory}}
containers:
$(ctr_yaml main '[sleep, "3600"]')
  volumeMounts: [{name: scratch, mountPath: /data}, {name: host, mountPath: /host}]
$(ctr_yaml user '[sleep, "3600"]')
  securityContext: {runAsUser: 1000, runAsGroup: 1000}"
	wait_until 120 jq_pod userns '[.status.containerStatuses[] | .state.running and .containerID] | length == 2 and all' || {
		grep -i -e 'userns-' -e 'user namespace' "$SUITE_DIR/kubelet.log" "$SUITE_DIR/containerd.log" | tail -8 >&2
		fail "pod userns did not run: $(kube_pod userns | jq -c .status.containerStatuses)"
	}
	id="$(ctr_id userns main)"
	# Inside: root of a user namespace mapping 65536 ids, not the identity.
	run -0 cri exec "$id" cat /proc/self/uid_map
	read -r uid base f <<<"$output"
	[ "$uid" = 0 ] && [ "$f" = 65536 ] && [ "$base" != 0 ] || fail "uid_map: $output"
	run -0 cri exec "$id" cat /proc/self/gid_map
	[ "$(echo $output)" = "0 $base 65536" ] || fail "gid_map: $output (uid_map 0 $base 65536)"
	run -0 cri exec "$id" id -u
	[ "$output" = 0 ] || fail "uid inside: $output"
	# On the host (its /proc): the mapped ids, for root and for uid 1000.
	pid="$(ctr_pid userns main)"
	[ "$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")" = "$base" ] || fail "host uid of main: $(grep -e Uid -e Gid "/proc/$pid/status")"
	[ "$(awk '/^Gid:/ {print $2}' "/proc/$pid/status")" = "$base" ] || fail "host gid of main: $(grep Gid "/proc/$pid/status")"
	pid="$(ctr_pid userns user)"
	[ "$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")" = "$((base + 1000))" ] || fail "host uid of user: $(grep Uid "/proc/$pid/status")"
	# The volumes are idmapped: what in-pod root writes is uid 0 on the host
	# (not the mapped $base), and the host's 0:0 is root inside. kubelet
	# gives the emptyDir fsGroup's set-gid bit: its files get gid 2000.
	run -0 cri exec "$id" sh -c 'echo in-pod > /data/f && echo in-pod > /host/f && stat -c %u:%g /data/f /host/f'
	[ "$(echo $output)" = "0:2000 0:0" ] || fail "owner inside: $output"
	f="$(echo "$SUITE_DIR"/kubelet/root/pods/*/volumes/kubernetes.io~empty-dir/scratch/f)"
	[ "$(stat -c %u:%g "$f")" = 0:2000 ] || fail "emptyDir file $f on the host: $(stat -c %u:%g "$f")"
	[ "$(stat -c %u:%g "$out/f")" = 0:0 ] || fail "hostPath file on the host: $(stat -c %u:%g "$out/f")"
	echo from-host >"$out/g"
	run -0 cri exec "$id" stat -c %u:%g /host/g
	[ "$output" = 0:0 ] || fail "a host file of 0:0 inside: $output"
	# kubelet removes a stopped sandbox only in its garbage collection, and
	# containerd unmounts the sandbox's pinned user namespace only then:
	# remove it through the CRI once kubelet has stopped the pod.
	sb="$(cri status "$id" | jq -r .info.sandboxID)"
	pod_del userns
	wait_until 90 pod_gone userns || fail "pod userns still there"
	cri stopp "$sb" && cri rmp "$sb" || fail "cannot remove sandbox $sb"
}

@test "zz: pods removed, kubelet and containerd stopped: nothing is left behind" {
	rm -f "$SUITE_DIR"/manifests/*.yaml
	local p
	for p in limits probes restart init shared secctx term userns; do
		wait_until 90 pod_gone "$p" || fail "pod $p still there"
	done
	kube_stop_all "$SUITE_DIR"
}
