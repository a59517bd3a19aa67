package console

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// consolePath is where the container sees its terminal as the console.
const consolePath = "/dev/console"

// Setup gives the calling process (husk init, inside the new root) a
// terminal: a pty of the container's devpts, sized as asked, the slave
// bound onto /dev/console, owned by uid and made stdin, stdout, stderr and
// the controlling terminal of a new session; the master goes over sock.
// ONLCR is cleared, as runc does: lines end in "\n" alone.
func Setup(sock *os.File, size *configs.ConsoleSize, uid uint32) error {
	master, slave, slavePath, err := OpenPty()
	if err != nil {
		return fmt.Errorf("process.terminal: %w", err)
	}
	defer master.Close()
	defer slave.Close()
	if size != nil {
		if err := SetSize(master, *size); err != nil {
			return fmt.Errorf("process.consoleSize: %w", err)
		}
	}
	// As runc: no "\r\n" for every "\n" the process prints, whoever reads
	// the master (a terminal of the caller's does its own ONLCR).
	if err := ClearONLCR(slave); err != nil {
		return fmt.Errorf("process.terminal: clear ONLCR on %s: %w", slavePath, err)
	}
	// The devpts makes the slave root's; the process must own its tty.
	if err := unix.Fchown(int(slave.Fd()), int(uid), -1); err != nil {
		return fmt.Errorf("process.terminal: chown %s to %d: %w", slavePath, uid, err)
	}
	if err := bindConsole(slave, slavePath); err != nil {
		return fmt.Errorf("process.terminal: %w", err)
	}
	if err := SendMaster(sock, master); err != nil {
		return fmt.Errorf("process.terminal: %w", err)
	}
	if err := makeControlling(slave); err != nil {
		return fmt.Errorf("process.terminal: %w", err)
	}
	return nil
}

// bindConsole binds the pty slave onto /dev/console, making the file to
// bind onto if the container's /dev has none. Both ends are fds
// (CVE-2025-52565): the target is opened without following any symlink
// (one there is refused: the mount would land wherever it points) and
// must be a file or a character device; the source is a clone of the
// mount of the slave fd init holds, not its path re-resolved.
func bindConsole(slave *os.File, slavePath string) error {
	target, err := openConsoleTarget()
	if err != nil {
		return err
	}
	defer unix.Close(target)
	src, err := unix.OpenTree(int(slave.Fd()), "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
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

// makeControlling makes the slave fds 0, 1 and 2 and the controlling
// terminal of a new session led by the caller.
func makeControlling(slave *os.File) error {
	for fd := 0; fd <= 2; fd++ {
		if err := unix.Dup3(int(slave.Fd()), fd, 0); err != nil {
			return fmt.Errorf("dup the pty slave onto fd %d: %w", fd, err)
		}
	}
	if _, err := unix.Setsid(); err != nil {
		return fmt.Errorf("setsid: %w", err)
	}
	if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 0); err != nil {
		return fmt.Errorf("make the pty the controlling terminal: %w", err)
	}
	return nil
}
