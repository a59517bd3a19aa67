package main

import (
	"math"
	"os"
	"runtime/debug"
)

// startMemoryLimit bounds a husk process's Go memory while its collector
// is off (startGC): the collector runs only when the heap nears it.
//
// A start allocates about 1 MiB, under the runtime's first goal of 4 MiB,
// so a plain start ran no cycle before either; but 150 KB of environment
// in config.json took `husk run -d` past that goal (one cycle), 1 MiB of it
// to 8 cycles in husk and the Go init it then had. Under the limit those
// are 0 and 1 (near the limit, where a pathological config still
// collects rather than grows without end).
const startMemoryLimit = 16 << 20

// gcStopped is whether startGC turned the collector off.
var gcStopped bool

// startGC turns the garbage collector off for the process's start: every
// husk command is short-lived, or short until it waits
// (resumeGC), and a collection would only cost CPU before exit. A caller
// that chose GOGC or GOMEMLIMIT keeps its choice.
func startGC() {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(startMemoryLimit)
	gcStopped = true
}

// resumeGC gives the collector back, with the runtime's defaults, to a
// command that now waits for as long as the container runs (run and exec
// in the foreground, events): what it allocates from here on is garbage
// over hours, and must not pile up to the limit.
func resumeGC() {
	if !gcStopped {
		return
	}
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	gcStopped = false
}
