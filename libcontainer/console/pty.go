// Package console makes the container's pseudo-terminal and passes its
// master side to whoever drives it.
//
// The pty itself is made by the launcher (nsenter/pty.c), for init and
// every exec alike: it sends the master over the console socket with
// SCM_RIGHTS, and binds a container's slave onto /dev/console. Outside (the caller of --console-socket, or
// `husk run` in the foreground): RecvMaster takes the master back, and
// SetSize sizes it.
package console

import (
	"fmt"
	"os"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

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
