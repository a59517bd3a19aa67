// Package stepfake runs the launcher's steps (nsenter/launch.c's
// husk_steps and the files that do them, linked from package nsenter)
// against a recording fake kernel (fake.c), without root. The steps'
// kernel calls go through husk_k (nsenter/kernel.h), which Launch points
// at the fake for one run. Only its tests use it; husk never links it.
package stepfake

/*
#cgo CFLAGS: -Wall -Werror -I${SRCDIR}/../.. -I${SRCDIR}/../../../libcontainer/bootstrap
#include <stdlib.h>
#include "fake.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	// The launcher's C (launch.c and the files of its steps), linked in
	// from its own package so that a change to it rebuilds this one.
	_ "github.com/husk-runtime/husk/nsenter"
)

// The fds and pids the fake hands out.
const (
	ConsoleFD   = C.STEPFAKE_CONSOLE_FD
	ListenerFD  = C.STEPFAKE_LISTENER_FD
	NotifyFD    = C.STEPFAKE_NOTIFY_FD
	PtySlaveFD  = C.STEPFAKE_PTY_SLAVE_FD
	ForkedPid   = C.STEPFAKE_FORKED_PID
	InitPid     = C.STEPFAKE_INIT_PID
	maxCalls    = C.STEPFAKE_MAX_CALLS
	errBufBytes = 1024
)

// Kernel is what the fake kernel has and answers.
type Kernel struct {
	// FailAt is the number (from 0) of the call that fails, with
	// Errno; -1: none does.
	FailAt int
	Errno  syscall.Errno
	// Passwd is /etc/passwd's bytes; nil: there is none.
	Passwd *string
	// Exe is the one executable file there is.
	Exe string
	// Getcwd is what getcwd answers after the cwd is entered.
	Getcwd string
	// StdioUID owns fds 0, 1 and 2.
	StdioUID uint32
	// Dirs are the paths that are directories, ':'-separated.
	Dirs string
	// NotProcfs: the files openat2 opens (not Dirs) are on a tmpfs.
	NotProcfs bool
}

// Call is one kernel call the steps made.
type Call struct {
	Step int    // the index in husk_steps of the step that made it
	Name string // "setresuid"
	Text string // "setresuid(1000, 1000, 1000)"
}

// Run is one launch against the fake.
type Run struct {
	Calls []Call
	// Steps are the indexes in husk_steps of the steps that ran, in
	// the order they started.
	Steps []int
	// Err is the launcher's error; nil when it reached execve.
	Err error
}

// Missing is how many calls of struct husk_kernel the real kernel (real)
// or the fake leaves NULL.
func Missing(real bool) int {
	r := C.int(0)
	if real {
		r = 1
	}
	return int(C.stepfake_missing(r))
}

// Steps are the names of husk_steps, in order.
func Steps() []string {
	names := make([]string, C.stepfake_n_steps())
	for i := range names {
		names[i] = C.GoString(C.stepfake_step_name(C.size_t(i)))
	}
	return names
}

// Launch encodes plan, parses it with the launcher's parser and runs the
// launch (open, the steps, execve) against the fake: as an exec when
// forks, else as a container's init.
func Launch(plan *bootstrap.Plan, forks bool, k Kernel) (*Run, error) {
	b, err := plan.Encode()
	if err != nil {
		return nil, err
	}
	conf := C.struct_stepfake_conf{
		fail_at:    C.int(k.FailAt),
		fail_errno: C.int(k.Errno),
		stdio_uid:  C.uint32_t(k.StdioUID),
	}
	if k.NotProcfs {
		conf.not_procfs = 1
	}
	for _, s := range []struct {
		to **C.char
		v  *string
	}{{&conf.passwd, k.Passwd}, {&conf.exe, &k.Exe}, {&conf.getcwd, &k.Getcwd}, {&conf.dirs, &k.Dirs}} {
		if s.v != nil {
			*s.to = C.CString(*s.v)
			defer C.free(unsafe.Pointer(*s.to))
		}
	}
	cplan := C.CBytes(b)
	defer C.free(cplan)
	var errbuf [errBufBytes]C.char
	forking := C.int(0)
	if forks {
		forking = 1
	}
	rc := C.stepfake_run((*C.char)(cplan), C.size_t(len(b)), forking, &conf, &errbuf[0], errBufBytes)
	if rc == -2 {
		return nil, fmt.Errorf("plan: %s", C.GoString(&errbuf[0]))
	}
	r := &Run{}
	if rc != 0 {
		r.Err = errors.New(C.GoString(&errbuf[0]))
	}
	n := int(C.stepfake_n_calls())
	if n >= maxCalls {
		return nil, fmt.Errorf("over %d calls: the fake's record is full", maxCalls)
	}
	step := -1
	for i := 0; i < n; i++ {
		text := C.GoString(C.stepfake_call(C.size_t(i)))
		if rest, ok := strings.CutPrefix(text, "#step "); ok {
			idx, _, _ := strings.Cut(rest, " ")
			if step, err = strconv.Atoi(idx); err != nil {
				return nil, fmt.Errorf("fake record %q: %w", text, err)
			}
			r.Steps = append(r.Steps, step)
			continue
		}
		name, _, _ := strings.Cut(text, "(")
		r.Calls = append(r.Calls, Call{Step: step, Name: name, Text: text})
	}
	return r, nil
}
