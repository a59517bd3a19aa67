package initproc

import (
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// setupConsole makes the container's pty (process.terminal), sends its
// master over the console socket and, with bind, binds the slave onto
// /dev/console; it returns the slave for pid 1, which makes it the
// process's stdio and controlling terminal (-1 without a terminal).
func (k *kernel) setupConsole(cfg *configs.Config, side *inherited, bind bool) (int, error) {
	p := cfg.Process
	if !p.Terminal {
		return -1, nil
	}
	defer side.console.Close()
	var rows, cols uint16
	if s := p.ConsoleSize; s != nil {
		rows, cols = s.Height, s.Width
	}
	slave, err := k.openPty(int(side.console.Fd()), p.ConsoleSize != nil, rows, cols, p.User.UID)
	if err != nil {
		return -1, err
	}
	if !bind {
		return slave, nil
	}
	if err := k.bindConsole(slave); err != nil {
		k.close(slave)
		return -1, fmt.Errorf("process.terminal: %w", err)
	}
	return slave, nil
}
