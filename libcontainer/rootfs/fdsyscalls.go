package rootfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// The fd-based calls of the host's /dev/null clone and device binds
// (paths.go, dev.go): nothing here takes a path that could be re-resolved
// through the container's filesystem after it was checked.

func openat2(dirfd int, path string, flags int, resolve uint64) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	fd, err := unix.Openat2(dirfd, path, how)
	return fd, os.NewSyscallError("openat2", err)
}

func openTree(dirfd int, path string, flags int) (int, error) {
	fd, err := unix.OpenTree(dirfd, path, uint(flags|unix.OPEN_TREE_CLOEXEC))
	return fd, os.NewSyscallError("open_tree", err)
}

func fstatfs(fd int) (unix.Statfs_t, error) {
	var st unix.Statfs_t
	return st, os.NewSyscallError("fstatfs", unix.Fstatfs(fd, &st))
}
