package specconv

import (
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ociVersion checks that ociVersion is a SemVer version, as the
// runtime-spec requires, of major version 1: the only one husk reads
// (SemVer: another major may change what any field means). runc 1.1
// accepts any string; husk refuses one it cannot compare ("banana") or
// of another major ("2.0.0"), naming the field (docs/spec-coverage.md).
func (c *converter) ociVersion() error {
	v := c.spec.Version
	if v == "" {
		return fieldErrorf("ociVersion", "missing: want the runtime-spec version the bundle was written for, e.g. %q", "1.0.2")
	}
	if !isSemVer(v) {
		return fieldErrorf("ociVersion", "%q is not a SemVer 2.0.0 version (MAJOR.MINOR.PATCH)", v)
	}
	if major, _, _ := strings.Cut(v, "."); major != strconv.Itoa(specs.VersionMajor) {
		return fieldErrorf("ociVersion", "%q has major version %s: husk reads runtime-spec %d.x bundles only (it implements %s)", v, major, specs.VersionMajor, specs.Version)
	}
	return nil
}

// isSemVer reports whether v is SemVer 2.0.0: MAJOR.MINOR.PATCH, numbers
// without leading zeros, then an optional -pre-release and +build
// metadata, each a dot-separated list of identifiers of [0-9A-Za-z-].
// (Written out rather than a regexp: a package-level regexp is compiled
// in every husk process, `husk init` included, and this one is long.)
func isSemVer(v string) bool {
	v, build, hasBuild := strings.Cut(v, "+")
	if hasBuild && !identifiers(build, false) {
		return false
	}
	core, pre, hasPre := strings.Cut(v, "-")
	if hasPre && !identifiers(pre, true) {
		return false
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if !isNumber(p) {
			return false
		}
	}
	return true
}

// identifiers checks a dot-separated list of non-empty identifiers of
// [0-9A-Za-z-]; in a pre-release, an all-digit one is a number and must
// not have a leading zero.
func identifiers(s string, pre bool) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		digits := true
		for i := 0; i < len(id); i++ {
			switch c := id[i]; {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				digits = false
			default:
				return false
			}
		}
		if pre && digits && !isNumber(id) {
			return false
		}
	}
	return true
}

// isNumber is a SemVer numeric identifier: 0, or digits without a
// leading zero.
func isNumber(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
