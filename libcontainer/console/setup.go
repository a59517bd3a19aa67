package console

import (
	"fmt"
	"os"

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
	if err := bindConsole(slavePath); err != nil {
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
// bind onto if the container's /dev has none. A symlink there is refused:
// the mount would land wherever it points.
func bindConsole(slavePath string) error {
	var st unix.Stat_t
	err := unix.Lstat(consolePath, &st)
	switch {
	case err == unix.ENOENT:
		fd, err := unix.Open(consolePath, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_WRONLY|unix.O_CLOEXEC, 0o666)
		if err != nil {
			return fmt.Errorf("create %s: %w", consolePath, err)
		}
		unix.Close(fd)
	case err != nil:
		return fmt.Errorf("stat %s: %w", consolePath, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%s is a symlink", consolePath)
	}
	if err := unix.Mount(slavePath, consolePath, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s onto %s: %w", slavePath, consolePath, err)
	}
	return nil
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
