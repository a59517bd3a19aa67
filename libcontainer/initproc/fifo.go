package initproc

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"golang.org/x/sys/unix"
)

// waitForStart blocks opening exec.fifo for writing until `husk start`
// opens it for reading, calls beforeHooks (the late seccomp filter), runs
// the startContainer hooks with the process's environment env, then
// writes what start waits for: bootstrap.FifoGo, or why the container
// cannot start. The fifo stays open (close-on-exec) until the execve:
// start waits for it to close before the poststart hooks.
func waitForStart(cfg *configs.Config, beforeHooks func() error, env []string) error {
	fd, err := strconv.Atoi(os.Getenv(bootstrap.EnvFifoFd))
	if err != nil {
		return fmt.Errorf("%s: %w", bootstrap.EnvFifoFd, err)
	}
	// Reopen through /proc: the O_PATH fd was opened on the host side.
	fifo, err := rootfs.ReopenFd(fd, unix.O_WRONLY)
	if err != nil {
		return fmt.Errorf("open exec fifo: %w", err)
	}
	unix.Close(fd)
	msg := []byte{bootstrap.FifoGo}
	hookErr := beforeHooks()
	if hookErr == nil {
		hookErr = startContainerHooks(cfg, env)
	}
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
