package specconv

import "regexp"

// semVer is SemVer 2.0.0: MAJOR.MINOR.PATCH, numbers without leading
// zeros, then an optional -pre-release and +build metadata.
var semVer = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// ociVersion checks that ociVersion is a SemVer version, as the
// runtime-spec requires. runc 1.1 accepts any string; husk refuses one it
// cannot compare ("banana"), naming the field (docs/spec-coverage.md).
func (c *converter) ociVersion() error {
	v := c.spec.Version
	if v == "" {
		return fieldErrorf("ociVersion", "missing: want the runtime-spec version the bundle was written for, e.g. %q", "1.0.2")
	}
	if !semVer.MatchString(v) {
		return fieldErrorf("ociVersion", "%q is not a SemVer 2.0.0 version (MAJOR.MINOR.PATCH)", v)
	}
	return nil
}
