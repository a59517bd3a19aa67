package initproc

import (
	"github.com/husk-runtime/husk/libcontainer/configs"
)

// setupConsole makes the pty of a container without a mount namespace
// of its own (process.terminal), before the chroot, and sends its master
// over the console socket; it returns the slave for pid 1, which makes
// it the process's stdio and controlling terminal (-1 without a
// terminal). With a mount namespace, pid 1 makes the console itself.
func (k *kernel) setupConsole(cfg *configs.Config, side *inherited) (int, error) {
	p := cfg.Process
	if !p.Terminal {
		return -1, nil
	}
	defer side.console.Close()
	var rows, cols uint16
	if s := p.ConsoleSize; s != nil {
		rows, cols = s.Height, s.Width
	}
	return k.openPty(int(side.console.Fd()), p.ConsoleSize != nil, rows, cols, p.User.UID)
}
