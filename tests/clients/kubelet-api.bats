#!/usr/bin/env bats
# kubelet (kubelet.bash) registered with an API server (kubeapi.bash) on a
# private containerd 2.x with two runtime handlers: `husk`, the runtime
# under test, and `runcref`, a runc recent enough for idmapped mounts
# (runc 1.5.3, built by build.sh runc; Debian 12's 1.1.5 has none), each
# behind a RuntimeClass of its name. The same hostUsers: false pod runs on
# both and must look the same; the API server gives it a projected
# service-account token.
#
# Needs containerd 2.x (HUSK_CONTAINERD_DIR, as clients-kube sets it), a
# runtime under test whose `features` report idmapped mounts, Linux >= 6.3,
# etcd (etcd-server), openssl and curl.

load kubelet
load kubeapi

# The API pods' namespace (kubelet's /var/log/containers links carry it).
KUBE_NS="husk-kubelet-api"

# Why the suite cannot run here, if it cannot: each test skips with it
# (Debian 12's bats 1.8 has no skip in setup_file).
setup_file() {
	local tar ref
	runtime_ready
	export SUITE_SKIP SUITE_DIR CRICLIENT REF_RUNC
	SUITE_SKIP="$(userns_skip_reason)"
	[ -n "$SUITE_SKIP" ] || SUITE_SKIP="$(kubeapi_missing)"
	[ -z "$SUITE_SKIP" ] || return 0
	REF_RUNC="${HUSK_REF_RUNC:-}"
	if [ -z "$REF_RUNC" ]; then
		ref="$("$REPO_ROOT/tests/clients/build.sh" runc)" || fail "cannot build runc (tests/clients/build.sh runc)"
		REF_RUNC="$ref/runc"
	fi
	SUITE_DIR="$(new_suite_dir)"
	CRICLIENT="$(build_criclient)" || fail "cannot build tests/clients/criclient"
	kubelet_binary >/dev/null || fail "cannot build kubelet (tests/clients/build.sh kubelet)"
	CONTAINERD_CONFIG_EXTRA="
[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runcref]
  runtime_type = \"io.containerd.runc.v2\"
  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runcref.options]
    BinaryName = \"$REF_RUNC\"
    Root = \"$SUITE_DIR/runcref\"
    SystemdCgroup = ${CONTAINERD_SYSTEMD_CGROUP:-false}" containerd_start "$SUITE_DIR" cri
	tar="$(build_image_tar)" || fail "cannot build the busybox image"
	ctr --address "$SUITE_DIR/c.sock" -n k8s.io images import "$tar" >/dev/null ||
		fail "ctr -n k8s.io images import $tar failed"
	kubeapi_start "$SUITE_DIR"
	kube_namespace_setup "$KUBE_NS"
	local rc
	for rc in husk runcref; do
		kapi_create /apis/node.k8s.io/v1/runtimeclasses \
			"$(jq -n --arg n "$rc" '{apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", metadata: {name: $n}, handler: $n}')"
	done
	kubelet_start "$SUITE_DIR" "$SUITE_DIR/api/kubeconfig"
	wait_until 120 kube_node_ready || {
		tail -20 "$SUITE_DIR/kubelet.log" >&2
		fail "node $KUBE_NODE not Ready: $(kapi GET "/api/v1/nodes/$KUBE_NODE" | jq -c .status.conditions)"
	}
}

teardown_file() {
	[ -d "${SUITE_DIR:-}" ] || return 0
	[ ! -e "$SUITE_DIR/kubelet.pid" ] || api_pods_clear || true
	kubelet_stop "$SUITE_DIR"
	kubeapi_stop "$SUITE_DIR"
	containerd_stop "$SUITE_DIR"
	clean_leaks "$SUITE_DIR" "$(basename "$(kube_cgroup_root "$SUITE_DIR")")"
	kube_cleanup "$SUITE_DIR"
	rm -rf "$SUITE_DIR"
}

# api_pod_add NAME RUNTIMECLASS HOSTDIR: the pod userns_facts reads, bound
# to the node (no scheduler), of the runtime RUNTIMECLASS, with HOSTDIR as
# its hostPath volume. Its name is NAME-<node>, as a static pod's, so that
# kubelet.bash's kube_pod and ctr_id find it by NAME.
api_pod_add() {
	kapi_create "/api/v1/namespaces/$KUBE_NS/pods" "$(jq -n --arg name "$1-$KUBE_NODE" --arg node "$KUBE_NODE" \
		--arg rc "$2" --arg host "$3" --arg img "$IMAGE_REF" '{
		apiVersion: "v1", kind: "Pod", metadata: {name: $name},
		spec: {
			nodeName: $node, runtimeClassName: $rc, hostUsers: false, terminationGracePeriodSeconds: 1,
			securityContext: {fsGroup: 2000},
			volumes: [{name: "scratch", emptyDir: {}}, {name: "host", hostPath: {path: $host, type: "Directory"}}],
			containers: [
				{name: "main", image: $img, imagePullPolicy: "Never", command: ["sleep", "3600"],
				 volumeMounts: [{name: "scratch", mountPath: "/data"}, {name: "host", mountPath: "/host"}]},
				{name: "user", image: $img, imagePullPolicy: "Never", command: ["sleep", "3600"],
				 securityContext: {runAsUser: 1000, runAsGroup: 1000},
				 volumeMounts: [{name: "scratch", mountPath: "/data"}]}
			]
		}}')"
}

# api_pods_clear: delete every pod of the namespace; once kubelet has
# stopped them, remove their sandboxes through the CRI (kubelet leaves a
# stopped sandbox to its garbage collection, and containerd unmounts the
# sandbox's pinned user namespace only then). The suite's containerd holds
# only the suite's sandboxes, one state directory each.
api_pods_clear() {
	local sb
	kapi DELETE "/api/v1/namespaces/$KUBE_NS/pods" >/dev/null || return 1
	wait_until 90 no_api_pods || fail "pods still there: $(kube_pods | jq -c '[.items // [] | .[].metadata.name]')"
	for sb in $(ls "$SUITE_DIR/state/io.containerd.grpc.v1.cri/sandboxes" 2>/dev/null); do
		cri stopp "$sb" && cri rmp "$sb" || fail "cannot remove sandbox $sb"
	done
}

# no_api_pods: kubelet runs no pod of the namespace.
no_api_pods() {
	kube_pods | jq -e --arg ns "$KUBE_NS" '[.items // [] | .[] | select(.metadata.namespace == $ns)] | length == 0' >/dev/null
}

# wait_api_pod NAME: until both containers of the pod NAME run.
wait_api_pod() {
	wait_until 120 jq_pod "$1" '[.status.containerStatuses[] | .state.running and .containerID] | length == 2 and all' || {
		grep -i -e "$1-" -e 'user namespace' "$SUITE_DIR/kubelet.log" "$SUITE_DIR/containerd.log" | tail -8 >&2
		fail "pod $1 did not run: $(kube_pod "$1" | jq -c .status.containerStatuses)"
	}
}

setup() {
	[ -z "$SUITE_SKIP" ] || skip "$SUITE_SKIP"
}

# Every test removes its pods and waits until kubelet has stopped them.
teardown() {
	[ -e "${SUITE_DIR:-}/kubelet.pid" ] || return 0 # the last test stopped it
	api_pods_clear
}

@test "kubelet with an API server: hostUsers: false: husk gives what runc 1.5.3 gives (ids, idmapped volumes, a projected service-account token)" {
	local rc facts_husk facts_ref token user
	for rc in husk runcref; do
		mkdir -p "$SUITE_DIR/host-$rc"
		api_pod_add "userns-$rc" "$rc" "$SUITE_DIR/host-$rc"
	done
	for rc in husk runcref; do
		wait_api_pod "userns-$rc"
	done
	# The pods run on the runtimes their RuntimeClasses name: each
	# runtime's state is under its handler's root (ROOT/<namespace>/<id>).
	local ref_id husk_id
	ref_id="$(ctr_id userns-runcref main)" || fail "no running container main in the runcref pod"
	husk_id="$(ctr_id userns-husk main)" || fail "no running container main in the husk pod"
	[ -d "$SUITE_DIR/runcref/k8s.io/$ref_id" ] || fail "the runcref pod is not runc's: $(find "$SUITE_DIR/runcref" "$SUITE_DIR/runc" -maxdepth 2)"
	[ -d "$SUITE_DIR/runc/k8s.io/$husk_id" ] || fail "the husk pod is not husk's: $(find "$SUITE_DIR/runcref" "$SUITE_DIR/runc" -maxdepth 2)"
	facts_ref="$(userns_facts userns-runcref "$SUITE_DIR/host-runcref")" || fail "facts of the runc pod"
	facts_husk="$(userns_facts userns-husk "$SUITE_DIR/host-husk")" || fail "facts of the husk pod"
	echo "runc 1.5.3: $facts_ref"
	[ "$facts_husk" = "$facts_ref" ] ||
		fail "husk and runc differ: $(diff <(echo "$facts_ref") <(echo "$facts_husk"))"
	# What both give is a user namespace, not the identity, with the
	# service-account token readable by the non-root user.
	assert_contains "$facts_husk" "uid_map: 0 0 65536"
	assert_contains "$facts_husk" "token readable by user: yes"
	# The token is a real one: the API server authenticates it as the
	# namespace's default ServiceAccount.
	user="$(ctr_id userns-husk user)"
	token="$(cri exec "$user" cat /var/run/secrets/kubernetes.io/serviceaccount/token)"
	run -0 curl -sS --fail-with-body --cacert "$SUITE_DIR/api/pki/apiserver.crt" -H "Authorization: Bearer $token" \
		-H 'Content-Type: application/json' -X POST \
		--data-binary '{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}' \
		"https://127.0.0.1:$(cat "$SUITE_DIR/api/port")/apis/authentication.k8s.io/v1/selfsubjectreviews"
	[ "$(jq -r .status.userInfo.username <<<"$output")" = "system:serviceaccount:$KUBE_NS:default" ] ||
		fail "the token authenticates as: $output"
}

@test "zz: pods removed, kubelet, the API server and containerd stopped: nothing is left behind" {
	api_pods_clear
	kube_stop_all "$SUITE_DIR" kubeapi_stop "$SUITE_DIR"
}
