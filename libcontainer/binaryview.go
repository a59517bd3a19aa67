package libcontainer

import (
	"fmt"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// huskBinaryView returns a path through which the husk binary can be executed
// without the container ever being able to write to it (CVE-2019-5736),
// and a function that releases it after the exec.
//
// The view is a detached, read-only bind mount of /proc/self/exe made with
// open_tree(OPEN_TREE_CLONE): it costs two syscalls, copies nothing, and
// being detached it never appears in any mountinfo. The fd is moved above
// the fds init inherits so exec.Cmd's fd shuffling cannot clobber it.
func huskBinaryView() (path string, release func(), err error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, "/proc/self/exe", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		if err == unix.EPERM {
			logrus.Debug("open_tree not permitted: husk init runs from a sealed memfd copy of the binary")
			return sealedExeCopy()
		}
		if err == unix.ENOSYS {
			logrus.Warn("open_tree is not available: husk init runs from /proc/self/exe without CVE-2019-5736 protection")
			return "/proc/self/exe", func() {}, nil
		}
		return "", nil, fmt.Errorf("open_tree /proc/self/exe: %w", err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, attr); err != nil {
		unix.Close(fd)
		return "", nil, fmt.Errorf("mount_setattr read-only on the husk binary view: %w", err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 16)
	unix.Close(fd)
	if err != nil {
		return "", nil, fmt.Errorf("dup husk binary view: %w", err)
	}
	logrus.Debugf("exe protection: husk init runs from a detached read-only open_tree view of /proc/self/exe (fd %d)", high)
	return fmt.Sprintf("/proc/self/fd/%d", high), func() { unix.Close(high) }, nil
}
