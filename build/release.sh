#!/usr/bin/env bash
# make release: husk and husk-cni for linux/amd64 and linux/arm64, static,
# into DIST (default dist/): one tarball and one SPDX 2.3 SBOM per
# architecture, and SHA256SUMS. Reproducible: -trimpath, no build id, no
# VCS stamp, tar entries sorted with owner 0 and the commit's time
# (SOURCE_DATE_EPOCH), gzip -n. amd64 is `make husk`'s build (musl,
# build/musl.sh); arm64 is glibc from Debian's cross gcc (build/arm64.sh;
# docs/building.md says why).
# The Makefile passes VERSION, COMMIT, HUSK_TAGS, HUSK_LDFLAGS, GO.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${VERSION:?} ${COMMIT:?} ${HUSK_TAGS:?} ${HUSK_LDFLAGS:?}"
GO=${GO:-go}
dist=${DIST:-dist}
arches=${RELEASE_ARCHES:-amd64 arm64}
if [ -n "$(git status --porcelain --untracked-files=no)" ] && [ -z "${HUSK_RELEASE_DIRTY:-}" ]; then
	echo "build/release.sh: the tree has uncommitted changes; a release is built from a commit (HUSK_RELEASE_DIRTY=1 overrides)" >&2
	git status --short --untracked-files=no >&2
	exit 1
fi
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH VERSION

# The C libraries linked into husk, as NAME@VERSION for the SBOM.
seccomp=$(. build/libseccomp.sh && echo "$version-$debian")
clibs() {
	case $1 in
	amd64) echo "musl@$(dpkg-query -W -f '${Version}' musl-dev) libseccomp@$seccomp" ;;
	arm64) echo "glibc@$(dpkg-query -W -f '${Version}' libc6-dev-arm64-cross) libseccomp@$seccomp" ;;
	esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$dist" && mkdir -p "$dist"
for arch in $arches; do
	case $arch in
	amd64) wrap=build/musl.sh ;;
	arm64) wrap=build/arm64.sh ;;
	*) echo "build/release.sh: no recipe for architecture $arch" >&2; exit 1 ;;
	esac
	name=husk-$VERSION-linux-$arch
	stage=$tmp/$name
	mkdir -p "$stage"
	echo "release: $name" >&2
	$wrap env GOARCH="$arch" GOFLAGS=-buildvcs=false "$GO" build -trimpath -tags "$HUSK_TAGS" \
		-ldflags "-buildid= $HUSK_LDFLAGS" -o "$stage/husk" .
	GOARCH=$arch CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$GO" build -trimpath -ldflags "-buildid=" \
		-o "$stage/husk-cni" ./cmd/husk-cni
	cp README.md CHANGELOG.md SECURITY.md VERSION "$stage/"
	cp docs/install.md "$stage/INSTALL.md"
	chmod 0755 "$stage/husk" "$stage/husk-cni" && chmod 0644 "$stage"/*.md "$stage/VERSION"
	tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		--format=gnu -C "$tmp" -cf - "$name" | gzip -n -9 >"$dist/$name.tar.gz"
	# shellcheck disable=SC2046 # one word per library
	build/sbom.sh "$name" "$arch" $(clibs "$arch") -- "$stage/husk" "$stage/husk-cni" >"$dist/$name.spdx.json"
done
(cd "$dist" && sha256sum -- *.tar.gz *.spdx.json >SHA256SUMS)
ls -l "$dist" >&2
