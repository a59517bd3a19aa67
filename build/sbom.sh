#!/usr/bin/env bash
# Writes an SPDX 2.3 JSON SBOM for a release's binaries on stdout: each
# binary, the Go modules its build info names (`go version -m`), the Go
# toolchain, and the C libraries linked into husk, with their versions.
#
#   build/sbom.sh NAME ARCH CLIB@VERSION... -- BINARY...
# VERSION is the binaries' version; SOURCE_DATE_EPOCH the document's
# creation time (reproducible builds).
set -euo pipefail

name=$1 arch=$2
shift 2
clibs=()
while [ "$1" != -- ]; do clibs+=("$1"); shift; done
shift
: "${SOURCE_DATE_EPOCH:?build/sbom.sh: SOURCE_DATE_EPOCH is not set}"
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

# One JSON line per package: the binaries, then what each contains.
packages() {
	local bin base
	for bin in "$@"; do
		base=$(basename "$bin")
		go version -m "$bin" | awk -v bin="$base" -v arch="$arch" '
			NR == 1 { printf "{\"bin\":\"%s\",\"kind\":\"go\",\"name\":\"golang\",\"version\":\"%s\"}\n", bin, $2 }
			$1 == "mod" { printf "{\"bin\":\"%s\",\"kind\":\"main\",\"name\":\"%s\",\"version\":\"%s\"}\n", bin, $2, $3 }
			$1 == "dep" { printf "{\"bin\":\"%s\",\"kind\":\"module\",\"name\":\"%s\",\"version\":\"%s\"}\n", bin, $2, $3 }'
	done
	local c
	for c in "${clibs[@]}"; do
		printf '{"bin":"husk","kind":"clib","name":"%s","version":"%s"}\n' "${c%@*}" "${c#*@}"
	done
}

packages "$@" | jq -s --arg version "${VERSION:?build/sbom.sh: VERSION is not set}" --arg name "$name" --arg arch "$arch" --arg created "$created" '
	def id: "SPDXRef-" + (.kind + "-" + .name + "-" + .version | gsub("[^A-Za-z0-9.-]"; "-"));
	def purl:
		if .kind == "module" or .kind == "main" then "pkg:golang/\(.name)@\(.version)"
		elif .kind == "go" then "pkg:golang/stdlib@\(.version)"
		else "pkg:deb/debian/\(.name)@\(.version)?arch=\($arch)&distro=debian-12" end;
	(map(if .kind == "main" then .version = $version else . end)
		| map(. + {id: (if .kind == "main" then "SPDXRef-bin-" + .bin else id end)})) as $all
	| {
		spdxVersion: "SPDX-2.3",
		dataLicense: "CC0-1.0",
		SPDXID: "SPDXRef-DOCUMENT",
		name: $name,
		documentNamespace: "https://github.com/husk-runtime/husk/spdx/\($name)",
		creationInfo: {created: $created, creators: ["Tool: husk build/sbom.sh"]},
		packages: ($all | unique_by(.id) | map({
			SPDXID: .id,
			name: (if .kind == "main" then .bin else .name end),
			versionInfo: .version,
			downloadLocation: "NOASSERTION",
			filesAnalyzed: false,
			primaryPackagePurpose: (if .kind == "main" then "APPLICATION" else "LIBRARY" end),
			externalRefs: [{referenceCategory: "PACKAGE-MANAGER", referenceType: "purl", referenceLocator: purl}]
		})),
		relationships: (
			($all | map(select(.kind == "main")) | map({spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES", relatedSpdxElement: .id}))
			+ ($all | map(select(.kind != "main")) | map({spdxElementId: ("SPDXRef-bin-" + .bin), relationshipType: "CONTAINS", relatedSpdxElement: .id}))
			| unique)
	}'
