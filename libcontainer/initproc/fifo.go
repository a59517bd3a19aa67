package initproc

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// waitForStart blocks opening exec.fifo for writing until `husk start`
// opens it for reading, runs the startContainer hooks, then writes what
// start waits for: bootstrap.FifoGo, or why the container cannot start.
func waitForStart(cfg *configs.Config) error {
	fd, err := strconv.Atoi(os.Getenv(bootstrap.EnvFifoFd))
	if err != nil {
		return fmt.Errorf("%s: %w", bootstrap.EnvFifoFd, err)
	}
	// Reopen through /proc: the O_PATH fd was opened on the host side.
	fifo, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open exec fifo: %w", err)
	}
	unix.Close(fd)
	msg := []byte{bootstrap.FifoGo}
	hookErr := startContainerHooks(cfg)
	if hookErr != nil {
		msg = []byte(hookErr.Error())
		if len(msg) > bootstrap.FifoMsgMax {
			msg = msg[:bootstrap.FifoMsgMax]
		}
	}
	if _, err := unix.Write(fifo, msg); err != nil {
		return fmt.Errorf("write exec fifo: %w", err)
	}
	return hookErr
}
