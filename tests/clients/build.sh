#!/usr/bin/env bash
# build.sh NAME...: build the clients of the test-only Go modules under
# tests/clients (kubelet, containerd2, critest, runc) from the Go module proxy,
# once, and print for each NAME the directory that holds its binaries.
#
# A build goes to $HUSK_CLIENTS_CACHE/NAME-<key>/ (default cache
# /var/cache/husk-clients), where <key> hashes the recipe: the module's files
# (go.mod, go.sum, any source), the build commands below and the Go version.
# A directory that exists is complete (it is renamed into place at the end),
# so a second run builds nothing. The Go module and build caches live in the
# same cache dir (gomod/, gocache/), shared by the three modules: they are
# content-addressed, and kubelet and critest share most of their modules.
# Older builds of a NAME are removed once a new one is in place.
#
#   kubelet      k8s.io/kubernetes' cmd/kubelet and cmd/kube-apiserver
#                                                          (kubelet, kube-apiserver)
#   containerd2  github.com/containerd/containerd/v2        (containerd, containerd-shim-runc-v2, ctr)
#   critest      sigs.k8s.io/cri-tools' critest, and the in-memory image
#                registry that serves critest's images     (critest, registry)
#   runc         github.com/opencontainers/runc, a release recent enough for
#                idmapped mounts (Debian 12's 1.1.5 has none): the reference
#                of the hostUsers: false pods                (runc)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${HUSK_CLIENTS_CACHE:-/var/cache/husk-clients}"
GO="${GO:-go}"
command -v "$GO" >/dev/null || GO=/usr/local/go/bin/go

# recipe_NAME OUT: build NAME's binaries into OUT (run in the module's dir).
# kube-apiserver of the same k8s.io/kubernetes: the API server of the
# suites that need one (service-account tokens, RuntimeClasses).
recipe_kubelet() {
	"$GO" build -o "$1/kubelet" k8s.io/kubernetes/cmd/kubelet
	"$GO" build -o "$1/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
}

# containerd's Makefile builds without btrfs (tag no_btrfs) when its
# headers are missing; Debian's libbtrfs-dev is not among the packages
# here, and the CRI suites use the overlayfs snapshotter.
recipe_containerd2() {
	local tags=no_btrfs
	"$GO" build -tags "$tags" -o "$1/" \
		github.com/containerd/containerd/v2/cmd/containerd \
		github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
		github.com/containerd/containerd/v2/cmd/ctr
}

# critest is a test binary (cmd/critest holds only a _test.go file):
# upstream's Makefile builds it with `go test -c`, and so does this. The
# registry that serves its images, and the two programs those images hold
# (static: they run in busybox images), come from this module.
recipe_critest() {
	"$GO" test -c -vet=off -o "$1/critest" sigs.k8s.io/cri-tools/cmd/critest
	"$GO" build -o "$1/registry" ./registry
	CGO_ENABLED=0 "$GO" build -o "$1/nginx" ./nginx
	CGO_ENABLED=0 "$GO" build -o "$1/nnp" ./nnp
	CGO_ENABLED=0 "$GO" build -o "$1/pause" ./pause
}

# runc with its seccomp support (cgo and libseccomp-dev), as its Makefile
# builds it by default.
recipe_runc() {
	"$GO" build -tags seccomp -o "$1/runc" github.com/opencontainers/runc
}

# key NAME: the hash of NAME's recipe.
key() {
	{
		declare -f "recipe_$1"
		"$GO" version
		(cd "$here/$1" && find . -type f | LC_ALL=C sort | xargs sha256sum)
	} | sha256sum | cut -c1-16
}

build() {
	local name="$1" k out tmp start
	declare -F "recipe_$name" >/dev/null || {
		echo "build.sh: unknown client $name (kubelet, containerd2, critest, runc)" >&2
		return 1
	}
	k="$(key "$name")"
	out="$cache/$name-$k"
	if [ ! -d "$out" ]; then
		mkdir -p "$cache"
		exec 9>"$cache/$name.lock"
		flock 9
		if [ ! -d "$out" ]; then
			tmp="$out.tmp"
			rm -rf "$tmp"
			mkdir -p "$tmp"
			start=$SECONDS
			echo "build.sh: building $name into $out" >&2
			(
				cd "$here/$name"
				export GOMODCACHE="$cache/gomod" GOCACHE="$cache/gocache"
				export GOFLAGS="-mod=readonly -buildvcs=false -trimpath" CGO_ENABLED=1
				"recipe_$name" "$tmp"
			) >&2
			mv "$tmp" "$out"
			echo "build.sh: built $name in $((SECONDS - start)) s" >&2
			find "$cache" -maxdepth 1 -name "$name-*" ! -name "$name-$k" -exec rm -rf {} + 2>/dev/null || true
		fi
		exec 9>&-
	fi
	echo "$out"
}

[ $# -gt 0 ] || set -- kubelet containerd2 critest runc
for name in "$@"; do
	build "$name"
done
