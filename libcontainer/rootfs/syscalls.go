package rootfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// The kernel calls of this package, one small function each, named after the
// syscall. Each returns an *os.SyscallError, so a message reads
// "mount: operation not permitted" and errors.Is still finds the errno.

func mount(source, target, fstype string, flags int, data string) error {
	return os.NewSyscallError("mount", unix.Mount(source, target, fstype, uintptr(flags), data))
}

func mountSetattr(dirfd int, flags uint, attr *unix.MountAttr) error {
	return os.NewSyscallError("mount_setattr", unix.MountSetattr(dirfd, "", flags, attr))
}

// moveMount attaches the detached mount tree from onto the directory or
// file the O_PATH descriptor to stands for.
func moveMount(from, to int) error {
	return os.NewSyscallError("move_mount",
		unix.MoveMount(from, "", to, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH))
}

func umount2(target string, flags int) error {
	return os.NewSyscallError("umount2", unix.Unmount(target, flags))
}

func pivotRoot(newRoot, putOld string) error {
	return os.NewSyscallError("pivot_root", unix.PivotRoot(newRoot, putOld))
}

func chroot(path string) error { return os.NewSyscallError("chroot", unix.Chroot(path)) }

func chdir(path string) error { return os.NewSyscallError("chdir", unix.Chdir(path)) }

func fchdir(fd int) error { return os.NewSyscallError("fchdir", unix.Fchdir(fd)) }

func open(path string, flags int) (int, error) {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	return fd, os.NewSyscallError("open", err)
}

func openat(dirfd int, name string, flags int) (int, error) {
	fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
	return fd, os.NewSyscallError("openat", err)
}

func mkdirat(dirfd int, name string, mode uint32) error {
	return os.NewSyscallError("mkdirat", unix.Mkdirat(dirfd, name, mode))
}

func mknodat(dirfd int, name string, mode uint32, dev uint64) error {
	return os.NewSyscallError("mknodat", unix.Mknodat(dirfd, name, mode, int(dev)))
}

func fchmodat(dirfd int, name string, mode uint32) error {
	return os.NewSyscallError("fchmodat", unix.Fchmodat(dirfd, name, mode, 0))
}

func fchownat(dirfd int, name string, uid, gid uint32) error {
	return os.NewSyscallError("fchownat",
		unix.Fchownat(dirfd, name, int(uid), int(gid), unix.AT_SYMLINK_NOFOLLOW))
}

func symlinkat(target string, dirfd int, name string) error {
	return os.NewSyscallError("symlinkat", unix.Symlinkat(target, dirfd, name))
}

func unlinkat(dirfd int, name string) error {
	return os.NewSyscallError("unlinkat", unix.Unlinkat(dirfd, name, 0))
}

func fstat(fd int) (unix.Stat_t, error) {
	var st unix.Stat_t
	return st, os.NewSyscallError("fstat", unix.Fstat(fd, &st))
}

func statfs(path string) (unix.Statfs_t, error) {
	var st unix.Statfs_t
	return st, os.NewSyscallError("statfs", unix.Statfs(path, &st))
}

func dup(fd int) (int, error) {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	return nfd, os.NewSyscallError("dup", err)
}

func closeFd(fd int) { _ = unix.Close(fd) }

// IDMapSupported reports whether the kernel can make idmapped mounts:
// mount_setattr(2) exists (Linux 5.12). Asked with an fd that cannot be
// valid, it fails with EBADF where it exists and ENOSYS where it does not.
func IDMapSupported() bool {
	err := unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP})
	return err != unix.ENOSYS
}
