package nsenter

/*
#include "launch.h"
*/
import "C"

import "errors"

// OpenPty is the launcher's husk_pty_send (pty.c), which pid 1 calls
// itself (build.c: a container without a mount namespace of its own gets
// a pty of the host's /dev/ptmx, made before the chroot), for the tests:
// sized when hasSize, its slave owned by uid, the master sent over the
// console socket sock. It returns the slave's fd.
func OpenPty(sock int, hasSize bool, rows, cols uint16, uid uint32) (int, error) {
	var errbuf [512]C.char
	tty := C.struct_husk_plan_tty{flags: C.HUSK_TTY_OPEN, rows: C.uint16_t(rows), cols: C.uint16_t(cols)}
	if hasSize {
		tty.flags |= C.HUSK_TTY_SIZE
	}
	fd := C.husk_pty_send(C.int(sock), &tty, C.uint32_t(uid), &errbuf[0], C.size_t(len(errbuf)))
	if fd < 0 {
		return -1, errors.New(C.GoString(&errbuf[0]))
	}
	return int(fd), nil
}
