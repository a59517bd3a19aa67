package initproc

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// inherited is what Go init takes from the runtime's side before it
// pivots into the rootfs: its channel to pid 1 and, with a terminal, the
// connection the parent made to the console socket
// (libcontainer/launch/initfds.go).
type inherited struct {
	launcher *os.File
	console  *os.File // nil without process.terminal
}

// takeInherited reads the fds from the environment. It must run before
// pivot_root: /proc is still the runtime's then.
func takeInherited(cfg *configs.Config) (*inherited, error) {
	s := &inherited{}
	var err error
	if s.launcher, err = inheritedFile(bootstrap.EnvLauncherFd); err != nil {
		return nil, err
	}
	if cfg.Process.Terminal {
		if os.Getenv(bootstrap.EnvConsoleFd) == "" {
			return nil, fmt.Errorf("process.terminal: the parent passed no connection to the console socket")
		}
		if s.console, err = inheritedFile(bootstrap.EnvConsoleFd); err != nil {
			return nil, fmt.Errorf("process.terminal: %w", err)
		}
	}
	return s, nil
}

// inheritedFile opens the fd named by environment variable env.
func inheritedFile(env string) (*os.File, error) {
	fd, err := strconv.Atoi(os.Getenv(env))
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not an inherited fd", env, os.Getenv(env))
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), env), nil
}
