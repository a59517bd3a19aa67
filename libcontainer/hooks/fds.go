package hooks

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// onlyStdio marks every fd above stderr close-on-exec, so a hook started
// now inherits only its stdio (Go's exec passes on any fd without
// FD_CLOEXEC: husk init's inherited pipes, the fds a process keeps with
// --preserve-fds). restore clears the flag again on the fds that did not
// have it, so the container's process still gets them at its execve.
func onlyStdio() (restore func(), err error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, fmt.Errorf("list my fds: %w", err)
	}
	var marked []int
	restore = func() {
		for _, fd := range marked {
			setCloexec(fd, false)
		}
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			continue // the fd ReadDir itself used, now closed
		}
		if flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		if err := setCloexec(fd, true); err != nil {
			restore()
			return nil, fmt.Errorf("mark fd %d close-on-exec: %w", fd, err)
		}
		marked = append(marked, fd)
	}
	return restore, nil
}

func setCloexec(fd int, on bool) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		return err
	}
	if on {
		flags |= unix.FD_CLOEXEC
	} else {
		flags &^= unix.FD_CLOEXEC
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags)
	return err
}
