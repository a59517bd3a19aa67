// Package console makes the container's pseudo-terminal and passes its
// master side to whoever drives it.
//
// Inside the container (husk init, after pivot_root): Setup opens a pty on
// the container's own devpts (/dev/ptmx), binds the slave onto
// /dev/console, sends the master over the console socket with SCM_RIGHTS,
// and makes the slave the process's stdio and controlling terminal.
// Outside (the caller of --console-socket, or `husk run` in the
// foreground): RecvMaster takes the master back.
package console

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// ptmxPath is the pty multiplexer; with a devpts mounted on /dev/pts the
// rootfs makes it a link to pts/ptmx, the container's own instance.
const ptmxPath = "/dev/ptmx"

// OpenPty opens a new pty pair and returns the master, the slave and the
// slave's path (/dev/pts/N). Neither fd becomes a controlling terminal.
func OpenPty() (master, slave *os.File, slavePath string, err error) {
	mfd, err := unix.Open(ptmxPath, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, "", fmt.Errorf("open %s: %w", ptmxPath, err)
	}
	master = os.NewFile(uintptr(mfd), ptmxPath)
	defer func() {
		if err != nil {
			master.Close()
		}
	}()
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return nil, nil, "", fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(mfd, unix.TIOCGPTN)
	if err != nil {
		return nil, nil, "", fmt.Errorf("pty number: %w", err)
	}
	slavePath = "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	sfd, err := openPeer(mfd, slavePath)
	if err != nil {
		return nil, nil, "", err
	}
	return master, os.NewFile(uintptr(sfd), slavePath), slavePath, nil
}

// openPeer opens the slave of master: through the master (TIOCGPTPEER),
// which cannot be fooled by what is at the path, or on old kernels by path.
func openPeer(master int, path string) (int, error) {
	const flags = unix.O_RDWR | unix.O_NOCTTY | unix.O_CLOEXEC
	fd, err := ioctlGetPtPeer(master, flags)
	if err == nil {
		return fd, nil
	}
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTTY) {
		return -1, fmt.Errorf("open pty slave: %w", err)
	}
	fd, err = unix.Open(path, flags, 0)
	if err != nil {
		return -1, fmt.Errorf("open pty slave %s: %w", path, err)
	}
	return fd, nil
}

// SetSize sets the terminal size of f, either side of a pty.
func SetSize(f *os.File, size configs.ConsoleSize) error {
	ws := &unix.Winsize{Row: size.Height, Col: size.Width}
	if err := unix.IoctlSetWinsize(int(f.Fd()), unix.TIOCSWINSZ, ws); err != nil {
		return fmt.Errorf("set the console size to %dx%d: %w", size.Height, size.Width, err)
	}
	return nil
}

// GetSize reads the terminal size of f.
func GetSize(f *os.File) (configs.ConsoleSize, error) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return configs.ConsoleSize{}, err
	}
	return configs.ConsoleSize{Height: ws.Row, Width: ws.Col}, nil
}

// ClearONLCR stops the terminal turning "\n" into "\r\n" on output.
func ClearONLCR(f *os.File) error {
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		return err
	}
	t.Oflag &^= unix.ONLCR
	return unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t)
}

// ioctlGetPtPeer is ioctl(master, TIOCGPTPEER, flags): the slave, opened
// with flags.
func ioctlGetPtPeer(master, flags int) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, uintptr(flags))
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}
