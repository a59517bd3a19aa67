package seccomp

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockFilterSize is the size of one BPF instruction, struct sock_filter.
const sockFilterSize = int(unsafe.Sizeof(unix.SockFilter{}))

// memfd makes an anonymous in-memory file.
func memfd(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// seccompSetModeFilter is seccomp(SECCOMP_SET_MODE_FILTER, flags, prog).
// With SECCOMP_FILTER_FLAG_NEW_LISTENER it returns the notify fd.
func seccompSetModeFilter(flags uint, prog []byte) (int, error) {
	fprog := unix.SockFprog{
		Len:    uint16(len(prog) / sockFilterSize),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&prog[0])),
	}
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(flags), uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}
