// Package onep starts the Go runtime of every husk process on one P
// (GOMAXPROCS=1), unless the caller set GOMAXPROCS.
//
// A husk process mostly waits on the kernel and on init: a second P only
// lets the Go scheduler spin, start threads, hand goroutines between them
// and wake them on the other CPU, from the runtime's own first goroutines
// on. The runtime sizes its Ps before any Go code runs, from GOMAXPROCS in
// the environment it finds after argv. So onep.c wraps the C entry point
// main (the linker's --wrap=main, which the Makefile passes): when the
// environment has no GOMAXPROCS, it hands the runtime a copy of argv, of
// the environment with GOMAXPROCS=1 added, and of the auxiliary vector.
// This package's init takes the variable out of the Go environment again,
// so nothing husk starts (hooks, CNI plugins, a `husk init`) inherits it.
//
// A binary linked without the flag (a plain `go build`) runs the same
// code on the runtime's default Ps.
package onep

/*
extern int husk_onep_added;
*/
import "C"

import "os"

func init() {
	if Added() {
		os.Unsetenv("GOMAXPROCS")
	}
}

// Added reports whether husk, not its caller, chose one P for this
// process.
func Added() bool { return C.husk_onep_added != 0 }
