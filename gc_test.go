package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestStartGC: startGC turns the collector off under the memory limit,
// resumeGC gives the runtime's defaults back, and a caller's GOGC or
// GOMEMLIMIT leaves both alone.
func TestStartGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
		gcStopped = false
	})
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if old, ok := os.LookupEnv(v); ok {
			os.Unsetenv(v)
			t.Cleanup(func() { os.Setenv(v, old) })
		}
	}
	startGC()
	if p, l := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); p != -1 || l != startMemoryLimit {
		t.Errorf("after startGC: GC percent %d, memory limit %d; want -1, %d", p, l, startMemoryLimit)
	}
	resumeGC()
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Errorf("after resumeGC: GC percent %d, memory limit %d; want 100, no limit", p, l)
	}
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "50")
			startGC()
			if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
				t.Errorf("%s set: GC percent %d, memory limit %d; want the caller's untouched", v, p, l)
			}
		})
	}
}
