#!/usr/bin/env bash
# An API server for kubelet.bash's kubelet: Debian's etcd and a
# kube-apiserver of the same k8s.io/kubernetes as the kubelet (build.sh
# kubelet builds both), private to the suite dir, loaded after kubelet.bash.
# No controller-manager and no scheduler: the suite creates what they would
# (the ServiceAccount `default`, the ConfigMap kube-root-ca.crt) and names
# the node in each pod.
#
# Everything lives under DIR/api: etcd's data, the serving certificate the
# API server makes itself (--cert-dir, self-signed: its file holds the CA
# the clients trust), the service-account key, a static token file (one
# token for kubelet and the suite; authorization is AlwaysAllow) and the
# kubeconfig kubelet is given. That directory is root's alone: the token
# makes its holder the cluster's admin, and anonymous requests are refused.

# kubeapi_port N: kubelet_start's base port + N (N = 2: etcd's peer port,
# 3: the API server's; the base port and the next are kubelet's).
kubeapi_port() {
	echo $((20000 + $$ % 20000 + $1))
}

# kubeapi_missing: what kubeapi_start needs and this machine lacks, if
# anything, as a reason to skip.
kubeapi_missing() {
	local c
	for c in etcd:etcd-server openssl:openssl curl:curl; do
		command -v "${c%%:*}" >/dev/null || echo "${c%%:*} not installed (apt-get install ${c#*:})"
	done | head -1
}

# kubeapi_start DIR: etcd and kube-apiserver for the suite of DIR; PIDs in
# DIR/etcd.pid and DIR/apiserver.pid, logs beside them. Prints nothing;
# DIR/api/kubeconfig is kubelet's.
kubeapi_start() {
	local d="$1" a="$1/api" bin peer_port port token
	bin="$(kubelet_binary)" || fail "no kubelet (tests/clients/build.sh kubelet failed)"
	bin="$(dirname "$bin")/kube-apiserver"
	[ -x "$bin" ] || fail "no kube-apiserver beside the kubelet ($bin)"
	peer_port="$(kubeapi_port 2)" port="$(kubeapi_port 3)"
	# The token is the API server's admin (AlwaysAllow): only root reads it.
	mkdir -p -m 0700 "$a"
	mkdir -p "$a/etcd" "$a/pki"
	# etcd serves its clients on a socket of the 0700 directory (etcd 3.4
	# names it "HOST:PORT" in its working directory), not on a port any
	# local user could write the cluster's objects through.
	(cd "$a" && exec etcd --name husk-test --data-dir "$a/etcd" \
		--listen-client-urls unix://etcd.sock:0 --advertise-client-urls unix://etcd.sock:0 \
		--listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "husk-test=http://127.0.0.1:$peer_port" \
		</dev/null >"$d/etcd.log" 2>&1 3>&-) &
	echo $! >"$d/etcd.pid"
	wait_until 60 curl -fsS --max-time 2 --unix-socket "$a/etcd.sock:0" http://localhost/health >/dev/null || {
		tail -20 "$d/etcd.log" >&2
		fail "etcd did not answer on $a/etcd.sock:0"
	}
	openssl genrsa -out "$a/sa.key" 2048 2>/dev/null || fail "openssl genrsa failed"
	token="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	echo "$token" >"$a/token"
	echo "$token,system:node:$KUBE_NODE,node-$KUBE_NODE,\"system:nodes,system:masters\"" >"$a/tokens.csv"
	"$bin" --etcd-servers "unix://$a/etcd.sock:0" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
		--cert-dir "$a/pki" --token-auth-file "$a/tokens.csv" --anonymous-auth=false \
		--authorization-mode AlwaysAllow \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$a/sa.key" --service-account-signing-key-file "$a/sa.key" \
		--service-cluster-ip-range 10.233.0.0/24 \
		</dev/null >"$d/apiserver.log" 2>&1 3>&- &
	echo $! >"$d/apiserver.pid"
	echo "$port" >"$a/port"
	wait_until 120 kapi_ready || {
		tail -30 "$d/apiserver.log" >&2
		fail "kube-apiserver did not become ready on 127.0.0.1:$port"
	}
	cat >"$a/kubeconfig" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: husk
		  cluster: {server: "https://127.0.0.1:$port", certificate-authority: "$a/pki/apiserver.crt"}
		users:
		- name: node
		  user: {token: "$token"}
		contexts:
		- name: husk
		  context: {cluster: husk, user: node}
		current-context: husk
	EOF
}

# kubeapi_stop DIR: stop the API server, then etcd.
kubeapi_stop() {
	daemon_stop "$1/apiserver.pid"
	daemon_stop "$1/etcd.pid"
}

# kapi METHOD PATH [JSON]: the API server's answer to METHOD PATH (with
# JSON as the body), as the suite's user; fails on an HTTP error, printing it.
kapi() {
	local a="$SUITE_DIR/api" args=()
	[ $# -lt 3 ] || args=(-H 'Content-Type: application/json' --data-binary "$3")
	curl -sS --fail-with-body --max-time 20 --cacert "$a/pki/apiserver.crt" \
		-H "Authorization: Bearer $(cat "$a/token")" -X "$1" "${args[@]}" \
		"https://127.0.0.1:$(cat "$a/port")$2"
}

# kapi_ready: the API server answers /readyz.
kapi_ready() {
	[ -s "$SUITE_DIR/api/pki/apiserver.crt" ] && kapi GET /readyz >/dev/null 2>&1
}

# kapi_create PATH YAML-AS-JSON: POST the object; prints nothing.
kapi_create() {
	kapi POST "$1" "$2" >/dev/null
}

# kube_namespace_setup NS: the namespace NS with what the controllers would
# have put in it: the ServiceAccount `default` (the ServiceAccount admission
# plugin refuses a pod whose account is missing) and the ConfigMap
# kube-root-ca.crt (the CA of the API server's serving certificate, which
# the projected kube-api-access volume holds as ca.crt).
kube_namespace_setup() {
	local ns="$1" ca
	ca="$(cat "$SUITE_DIR/api/pki/apiserver.crt")"
	kapi_create /api/v1/namespaces "$(jq -n --arg n "$ns" '{apiVersion: "v1", kind: "Namespace", metadata: {name: $n}}')"
	kapi_create "/api/v1/namespaces/$ns/serviceaccounts" \
		'{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}'
	kapi_create "/api/v1/namespaces/$ns/configmaps" "$(jq -n --arg ca "$ca" \
		'{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "kube-root-ca.crt"}, data: {"ca.crt": $ca}}')"
}

# kube_node_ready: kubelet has registered KUBE_NODE and it is Ready.
kube_node_ready() {
	kapi GET "/api/v1/nodes/$KUBE_NODE" 2>/dev/null |
		jq -e '.status.conditions[] | select(.type == "Ready") | .status == "True"' >/dev/null
}
