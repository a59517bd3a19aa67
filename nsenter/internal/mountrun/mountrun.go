// Package mountrun runs the launcher's mounts (nsenter/mounts.c) on the
// real kernel, from Go, for the test that compares what they make with
// what Go init's rootfs package makes for the same config. Only its
// tests use it; husk never links it.
package mountrun

/*
#cgo CFLAGS: -Wall -Werror -I${SRCDIR}/../.. -I${SRCDIR}/../../../libcontainer/bootstrap
#include <stdlib.h>
#include "mounts.h"

static int run(const char *plan, size_t len, int enter, char *err, size_t errlen)
{
	struct husk_mounts p;
	int rc;

	if (husk_parse_mounts(plan, len, &p, err, errlen) < 0)
		return -2;
	rc = husk_do_mounts(&p, err, errlen);
	if (rc == 0 && enter)
		rc = husk_enter_root(&p, err, errlen);
	husk_mounts_free(&p);
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	// The launcher's C, linked in from its own package.
	_ "github.com/husk-runtime/husk/nsenter"
)

// Run makes plan's mounts with mounts.c, in the calling thread's mount
// namespace (lock the thread to it).
func Run(plan *bootstrap.MountPlan) error { return run(plan, false) }

// RunAndEnter is Run, then the rootfs made the thread's "/"
// (husk_enter_root: pivot_root).
func RunAndEnter(plan *bootstrap.MountPlan) error { return run(plan, true) }

func run(plan *bootstrap.MountPlan, enter bool) error {
	b, err := plan.Encode()
	if err != nil {
		return err
	}
	cplan := C.CBytes(append(b, 0))
	defer C.free(cplan)
	var errbuf [2048]C.char
	e := C.int(0)
	if enter {
		e = 1
	}
	switch C.run((*C.char)(cplan), C.size_t(len(b)), e, &errbuf[0], C.size_t(len(errbuf))) {
	case 0:
		return nil
	case -2:
		return fmt.Errorf("mount plan: %s", C.GoString(&errbuf[0]))
	}
	return errors.New(C.GoString(&errbuf[0]))
}
