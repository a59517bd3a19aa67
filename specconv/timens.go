package specconv

import (
	"fmt"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// timeClocks are the clocks a time namespace offsets, in the order written.
var timeClocks = []string{"monotonic", "boottime"}

// TimensOffsets returns linux.timeOffsets as the text written to
// /proc/self/timens_offsets ("monotonic SECS NANOSECS\n..."), or "" when
// there are none. Offsets need a new time namespace.
func TimensOffsets(s *specs.Spec) (string, error) {
	if s == nil || s.Linux == nil || len(s.Linux.TimeOffsets) == 0 {
		return "", nil
	}
	offsets := s.Linux.TimeOffsets
	for clock := range offsets {
		if !slices.Contains(timeClocks, clock) {
			return "", fieldErrorf("linux.timeOffsets", "unknown clock %q, want %q", clock, timeClocks)
		}
	}
	if !newTimeNamespace(s.Linux.Namespaces) {
		return "", fieldErrorf("linux.timeOffsets", `needs a new "time" namespace in linux.namespaces`)
	}
	var b strings.Builder
	for _, clock := range timeClocks {
		o, ok := offsets[clock]
		if !ok {
			continue
		}
		if o.Nanosecs >= 1e9 {
			return "", fieldErrorf("linux.timeOffsets."+clock+".nanosecs", "must be below 1000000000, got %d", o.Nanosecs)
		}
		fmt.Fprintf(&b, "%s %d %d\n", clock, o.Secs, o.Nanosecs)
	}
	return b.String(), nil
}

func newTimeNamespace(list []specs.LinuxNamespace) bool {
	for _, ns := range list {
		if ns.Type == specs.TimeNamespace && ns.Path == "" {
			return true
		}
	}
	return false
}

// timeOffsets converts linux.timeOffsets; the bootstrap message carries them.
func (c *converter) timeOffsets() error {
	offsets, err := TimensOffsets(c.spec)
	c.cfg.TimensOffsets = offsets
	return err
}
