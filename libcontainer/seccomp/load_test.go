package seccomp

import (
	"fmt"
	"unsafe"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// load installs the compiled program on the calling thread, as the
// launcher (nsenter/launch.c) does in a container's process, and returns
// the notify fd when the program has one, else -1.
func load(p *configs.SeccompProgram) (int, error) {
	fprog := unix.SockFprog{
		Len:    uint16(len(p.Filter) / sockFilterSize),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&p.Filter[0])),
	}
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(p.Flags), uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, fmt.Errorf("seccomp(SET_MODE_FILTER, flags %#x): %w", p.Flags, errno)
	}
	if p.Flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 {
		return -1, nil
	}
	return int(r), nil
}

// sendToListener sends msg and the notify fd over conn with SCM_RIGHTS,
// as the launcher does.
func sendToListener(conn, notifyFd int, msg []byte) error {
	return unix.Sendmsg(conn, msg, unix.UnixRights(notifyFd), nil, 0)
}
