package launch

import (
	"fmt"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// binaryView is a path through which the husk binary can be executed
// without the container ever being able to write to it (CVE-2019-5736):
// husk init runs from it.
//
// It is a detached, read-only bind mount of /proc/self/exe made with
// open_tree(OPEN_TREE_CLONE): two syscalls, nothing copied, and being
// detached it never appears in any mountinfo. Or, where open_tree is not
// permitted, a sealed memfd copy (exe_memfd.go).
//
// Once husk init runs, nothing may execute the binary again: seal makes
// the view non-executable (MOUNT_ATTR_NOEXEC on the detached mount; no
// exec bit, and F_SEAL_EXEC, on the memfd). Whatever then tries to run
// /proc/<init>/exe, as a `#!/proc/self/exe` script's interpreter, an
// ELF's PT_INTERP or through binfmt_misc, gets EACCES from the kernel,
// while husk init runs on (its image is mapped already).
type binaryView struct {
	path string
	fd   int  // the view's mount, or the memfd; -1 for none
	mem  bool // a memfd copy
}

// huskBinaryView makes the view. The fd is moved above the fds init
// inherits so the fd shuffling of a start cannot clobber it.
func huskBinaryView() (*binaryView, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, "/proc/self/exe", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		if err == unix.EPERM {
			logrus.Debug("open_tree not permitted: husk init runs from a sealed memfd copy of the binary")
			return sealedExeCopy()
		}
		if err == unix.ENOSYS {
			logrus.Warn("open_tree is not available: husk init runs from /proc/self/exe without CVE-2019-5736 protection")
			return &binaryView{path: "/proc/self/exe", fd: -1}, nil
		}
		return nil, fmt.Errorf("open_tree /proc/self/exe: %w", err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, attr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mount_setattr read-only on the husk binary view: %w", err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 16)
	unix.Close(fd)
	if err != nil {
		return nil, fmt.Errorf("dup husk binary view: %w", err)
	}
	logrus.Debugf("exe protection: husk init runs from a detached read-only open_tree view of /proc/self/exe (fd %d)", high)
	return &binaryView{path: fmt.Sprintf("/proc/self/fd/%d", high), fd: high}, nil
}

// seal makes the view non-executable from now on: call it once husk init
// has been exec'd from it (the last legitimate exec of the binary).
func (v *binaryView) seal() error {
	switch {
	case v.fd < 0:
		return nil
	case v.mem:
		return sealExecMemfd(v.fd)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOEXEC}
	if err := unix.MountSetattr(v.fd, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("mount_setattr noexec on the husk binary view: %w", err)
	}
	return nil
}

// release closes the parent's handle; husk init's image keeps the view
// alive as long as it runs.
func (v *binaryView) release() {
	if v.fd >= 0 {
		unix.Close(v.fd)
	}
}
