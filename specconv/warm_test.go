package specconv

import "testing"

// TestWarmSpecParses: the sample Warm decodes is a whole, valid config
// (a sample that failed to parse would warm only part of the decoders).
func TestWarmSpecParses(t *testing.T) {
	s, err := Parse(warmSpec)
	if err != nil {
		t.Fatal(err)
	}
	if s.Process == nil || s.Linux == nil || len(s.Mounts) == 0 || s.Linux.Resources == nil {
		t.Fatalf("the warm-up sample lacks parts every bundle has: %+v", s)
	}
}
