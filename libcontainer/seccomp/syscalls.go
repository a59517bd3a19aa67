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
