package console

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// consolePath is where the container sees its terminal as the console.
const consolePath = "/dev/console"

// BindConsole binds the pty slave (an fd of Go init, in the new root)
// onto /dev/console, making the file to bind onto if the container's
// /dev has none. Both ends are fds (CVE-2025-52565): the target is opened
// without following any symlink (one there is refused: the mount would
// land wherever it points) and must be a file or a character device; the
// source is a clone of the mount of the slave fd, not its path
// re-resolved.
func BindConsole(slave int) error {
	target, err := openConsoleTarget()
	if err != nil {
		return err
	}
	defer unix.Close(target)
	slavePath, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(slave))
	if err != nil {
		return fmt.Errorf("name the pty slave: %w", err)
	}
	src, err := unix.OpenTree(slave, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err == unix.EINVAL {
		// The slave's devpts is not a mount of this namespace (a ptmx
		// node of the host's instance): bind its path onto the checked
		// target.
		if err := unix.Mount(slavePath, "/proc/self/fd/"+strconv.Itoa(target), "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s onto %s: %w", slavePath, consolePath, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("clone the mount of %s: %w", slavePath, err)
	}
	defer unix.Close(src)
	err = unix.MoveMount(src, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("bind %s onto %s: %w", slavePath, consolePath, err)
	}
	return nil
}

// openConsoleTarget opens /dev/console as an O_PATH fd, creating an empty
// file there if there is nothing.
func openConsoleTarget() (int, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, consolePath, how)
	if err == unix.ENOENT {
		cfd, cerr := unix.Open(consolePath, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_WRONLY|unix.O_CLOEXEC, 0o666)
		if cerr != nil {
			return -1, fmt.Errorf("create %s: %w", consolePath, cerr)
		}
		unix.Close(cfd)
		fd, err = unix.Openat2(unix.AT_FDCWD, consolePath, how)
	}
	if err == unix.ELOOP {
		return -1, fmt.Errorf("%s is a symlink, or lies under one", consolePath)
	}
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", consolePath, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("stat %s: %w", consolePath, err)
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFCHR {
		unix.Close(fd)
		if t == unix.S_IFLNK {
			return -1, fmt.Errorf("%s is a symlink", consolePath)
		}
		return -1, fmt.Errorf("%s is not a file or a character device (mode %#o)", consolePath, st.Mode)
	}
	return fd, nil
}
