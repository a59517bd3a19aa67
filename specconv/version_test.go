package specconv

import (
	"regexp"
	"testing"
)

// The SemVer 2.0.0 grammar as a regexp (semver.org's, anchored): the
// oracle isSemVer must agree with.
var semVerPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

func TestIsSemVerAgreesWithTheGrammar(t *testing.T) {
	cases := []string{
		"1.0.0", "0.0.0", "1.2.3", "10.20.30", "1.0.2", "1.3.0",
		"1.0.0-rc.1", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92",
		"1.0.0-x-y-z.--", "1.0.0-alpha+001", "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85",
		"1.0.0+21AF26D3----117B344092BD", "1.0.0-0A.is.legal", "1.0.0-rc1+build.1",
		"", "1", "1.0", "1.0.0.0", "01.0.0", "1.01.0", "1.0.01", "1.0.0-", "1.0.0+", "1.0.0-01",
		"1.0.0-rc..1", "1.0.0-rc.1.", "1.0.0+a..b", "1.0.0+a+b", "v1.0.0", "1.0.0 ", " 1.0.0",
		"banana", "1.0.0-ü", "1.0.0+ü", "1.-1.0", "1..0", ".1.0", "1.0.", "1.0.0-00", "1.0.0+00",
		"1.0.0-0", "1.0.0-a-", "1.0.0--", "1.0.0-+", "1.0.0+-", "-1.0.0", "1.0.0_1", "1.0.0-_",
	}
	for _, v := range cases {
		if got, want := isSemVer(v), semVerPattern.MatchString(v); got != want {
			t.Errorf("isSemVer(%q) = %v, the grammar says %v", v, got, want)
		}
	}
}

func FuzzIsSemVer(f *testing.F) {
	f.Add("1.0.0-rc.1+b.2")
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := isSemVer(v), semVerPattern.MatchString(v); got != want {
			t.Errorf("isSemVer(%q) = %v, the grammar says %v", v, got, want)
		}
	})
}
