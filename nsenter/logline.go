package nsenter

/*
#include <stdlib.h>
#include "nsexec.h"

static void husk_log_line(const char *level, const char *msg) { husk_logf(level, "%s", msg); }
*/
import "C"

import "unsafe"

// WriteLogLine writes msg at level with the launcher's husk_logf (to the
// fd named by bootstrap.EnvLogPipe) and Mark a trace record with its
// husk_mark (to bootstrap.EnvTraceFd), so tests check what C writes
// against what the Go side reads (bootstrap.ParseLogLine, trace.Record).
func WriteLogLine(level, msg string) {
	l, m := C.CString(level), C.CString(msg)
	defer C.free(unsafe.Pointer(l))
	defer C.free(unsafe.Pointer(m))
	C.husk_log_line(l, m)
}

// Mark: see WriteLogLine.
func Mark(phase string) {
	p := C.CString(phase)
	defer C.free(unsafe.Pointer(p))
	C.husk_mark(p)
}
