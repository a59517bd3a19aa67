package stepfake

/*
#include <stdlib.h>
#include "fake.h"
#include "mounts.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
)

// MountRun is one run of the launcher's mounts (nsenter/mounts.c)
// against the fake's file tree.
type MountRun struct {
	Calls []string // "openat(/, dev, dir)", "move_mount(tmpfs -> /dev)", ...
	Err   error    // the launcher's error; nil when every mount was made
	// OpenFds is how many fds the fake handed out that are still open.
	OpenFds int
}

// Mounts encodes plan and runs it with mounts.c against the fake, whose
// file tree is tree (fake.h: "d /proc", "l /escape /../../tmp", "D /host"
// ...). The call numbered failAt (from 0; -1: none) fails with errno.
func Mounts(plan *bootstrap.MountPlan, tree string, failAt int, errno syscall.Errno) (*MountRun, error) {
	return mounts(plan, tree, false, failAt, errno)
}

// MountsAndEnter is Mounts, then husk_enter_root (pivot_root).
func MountsAndEnter(plan *bootstrap.MountPlan, tree string, failAt int, errno syscall.Errno) (*MountRun, error) {
	return mounts(plan, tree, true, failAt, errno)
}

func mounts(plan *bootstrap.MountPlan, tree string, enter bool, failAt int, errno syscall.Errno) (*MountRun, error) {
	b, err := plan.Encode()
	if err != nil {
		return nil, err
	}
	return run(b, tree, enter, failAt, errno)
}

// MountsRaw is Mounts with the payload as it is.
func MountsRaw(b []byte, tree string, failAt int, errno syscall.Errno) (*MountRun, error) {
	return run(b, tree, false, failAt, errno)
}

func run(b []byte, tree string, enter bool, failAt int, errno syscall.Errno) (*MountRun, error) {
	e := C.int(0)
	if enter {
		e = 1
	}
	ctree := C.CString(tree)
	defer C.free(unsafe.Pointer(ctree))
	cplan := C.CBytes(append([]byte{0}, b...))
	defer C.free(cplan)
	var errbuf [errBufBytes]C.char
	var open C.int
	rc := C.stepfake_mounts_run((*C.char)(unsafe.Add(cplan, 1)), C.size_t(len(b)), ctree, e, C.int(failAt), C.int(errno),
		&errbuf[0], errBufBytes, &open)
	if rc == -2 {
		return nil, fmt.Errorf("mount plan: %s", C.GoString(&errbuf[0]))
	}
	r := &MountRun{OpenFds: int(open)}
	if rc != 0 {
		r.Err = errors.New(C.GoString(&errbuf[0]))
	}
	n := int(C.stepfake_n_calls())
	if n >= maxCalls {
		return nil, fmt.Errorf("over %d calls: the fake's record is full", maxCalls)
	}
	for i := 0; i < n; i++ {
		r.Calls = append(r.Calls, C.GoString(C.stepfake_call(C.size_t(i))))
	}
	return r, nil
}

// SplitMountData is a mount's data split into options as mounts.c gives
// them to fsconfig(2); false when the C buffer is too small.
func SplitMountData(data string) ([]string, bool) {
	cdata := C.CString(data)
	defer C.free(unsafe.Pointer(cdata))
	out := make([]byte, len(data)+1)
	n := C.husk_split_mount_data(cdata, (*C.char)(unsafe.Pointer(&out[0])), C.size_t(len(out)))
	if n < 0 {
		return nil, false
	}
	var opts []string
	for i := 0; i < int(n); i++ {
		end := 0
		for out[end] != 0 {
			end++
		}
		opts = append(opts, string(out[:end]))
		out = out[end+1:]
	}
	return opts, true
}

// ProcCheck is mounts.c's check of a destination (a clean container
// path) against /proc, as configs.CheckProcMount does it.
func ProcCheck(dest, fstype string, bind bool) error {
	cdest, ctype := C.CString(dest), C.CString(fstype)
	defer C.free(unsafe.Pointer(cdest))
	defer C.free(unsafe.Pointer(ctype))
	var errbuf [errBufBytes]C.char
	b := C.int(0)
	if bind {
		b = 1
	}
	if C.husk_mount_proc_check(cdest, ctype, b, &errbuf[0], errBufBytes) < 0 {
		return errors.New(C.GoString(&errbuf[0]))
	}
	return nil
}
