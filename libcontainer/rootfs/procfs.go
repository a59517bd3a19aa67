package rootfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// WriteSysctl writes value to the sysctl key (linux.sysctl) in the
// container's /proc, from inside the new root. The file is reached from an
// fd of /proc checked to be procfs, without following symlinks and without
// crossing into another mount (a bind over a /proc/sys file, such as a
// mask, is refused, never written through), and is checked to be on procfs
// itself (CVE-2025-52881: a write meant for the container's procfs must
// never land on a file the image chose).
func WriteSysctl(key, value string) error {
	return writeProc("sys/"+strings.ReplaceAll(key, ".", "/"), value)
}

// WriteThreadAttr writes value to the calling thread's LSM attribute file
// attr ("exec", "apparmor/exec") in the container's /proc, checked as
// WriteSysctl checks: the path is /proc/PID/task/TID/attr/..., with no
// symlink (not /proc/thread-self), so an image cannot point the label
// write elsewhere and start its process unconfined (CVE-2025-52881).
func WriteThreadAttr(attr, value string) error {
	return writeProc(fmt.Sprintf("%d/task/%d/attr/%s", unix.Getpid(), unix.Gettid(), attr), value)
}

// writeProc writes value to /proc/name, reached from a checked procfs fd
// without following symlinks or crossing into another mount.
func writeProc(name, value string) error {
	proc, err := openProc()
	if err != nil {
		return err
	}
	defer closeFd(proc)
	fd, err := openat2(proc, name, unix.O_WRONLY|unix.O_NOFOLLOW,
		unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_XDEV)
	if err != nil {
		return fmt.Errorf("open /proc/%s: %w", name, err)
	}
	defer closeFd(fd)
	if err := isProcfs(fd); err != nil {
		return fmt.Errorf("/proc/%s: %w", name, err)
	}
	if _, err := unix.Write(fd, []byte(value)); err != nil {
		return fmt.Errorf("write /proc/%s: %w", name, err)
	}
	return nil
}

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
