package rootfs

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openProc opens the container's /proc, which must be a procfs.
func openProc() (int, error) {
	fd, err := openat2(unix.AT_FDCWD, "/proc", unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_NO_SYMLINKS)
	if err != nil {
		return -1, fmt.Errorf("open /proc: %w", err)
	}
	if err := isProcfs(fd); err != nil {
		closeFd(fd)
		return -1, fmt.Errorf("/proc: %w", err)
	}
	return fd, nil
}

func isProcfs(fd int) error {
	st, err := fstatfs(fd)
	if err != nil {
		return err
	}
	if st.Type != unix.PROC_SUPER_MAGIC {
		return fmt.Errorf("not on procfs (filesystem magic %#x)", st.Type)
	}
	return nil
}

// hostProc is the host's /proc, kept by chrootRoot for a container without
// a mount namespace of its own, whose root has no /proc (nothing is
// mounted for it); -1 otherwise. It is close-on-exec.
var hostProc = -1

// ReopenFd opens what fd stands for anew, with flags, through procfs's
// /proc/self/fd: the container's /proc, or the host's that chrootRoot
// kept for a container without a mount namespace of its own.
func ReopenFd(fd, flags int) (int, error) {
	dir, name := unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd)
	if hostProc >= 0 {
		dir, name = hostProc, name[len("/proc/"):]
	}
	nfd, err := unix.Openat(dir, name, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: "/proc/self/fd/" + strconv.Itoa(fd), Err: err}
	}
	return nfd, nil
}
