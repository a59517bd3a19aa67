// Package hookrun runs the launcher's createContainer hooks
// (nsenter/hooks.c) from Go, for the tests that compare them with
// libcontainer/hooks's. Only its tests use it; husk never links it.
package hookrun

/*
#cgo CFLAGS: -Wall -Werror -I${SRCDIR}/../.. -I${SRCDIR}/../../../libcontainer/bootstrap
#include <stdlib.h>
#include "hooks.h"

static int run(const char *plan, size_t len, int parse_only, char *err, size_t errlen)
{
	struct husk_hooks h;
	int rc = 0;

	if (husk_parse_hooks(plan, len, &h, err, errlen) < 0)
		return -2;
	if (!parse_only)
		rc = husk_run_hooks(&h, err, errlen);
	husk_hooks_free(&h);
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	// The launcher's C, linked in from its own package.
	_ "github.com/husk-runtime/husk/nsenter"
)

// ErrParse marks a plan the parser refused.
var ErrParse = errors.New("hook plan refused")

// Run parses the encoded hook plan and runs it (only parses it with
// parseOnly): nil, or the launcher's error.
func Run(plan []byte, parseOnly bool) error {
	var errbuf [16384]C.char
	p := C.CBytes(append(append([]byte{}, plan...), 0))
	defer C.free(p)
	only := C.int(0)
	if parseOnly {
		only = 1
	}
	switch C.run((*C.char)(p), C.size_t(len(plan)), only, &errbuf[0], C.size_t(len(errbuf))) {
	case 0:
		return nil
	case -2:
		return fmt.Errorf("%w: %s", ErrParse, C.GoString(&errbuf[0]))
	default:
		return errors.New(C.GoString((*C.char)(unsafe.Pointer(&errbuf[0]))))
	}
}
