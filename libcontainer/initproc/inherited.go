package initproc

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// inherited is what init takes from the runtime's side before it pivots
// into the rootfs: the connections the parent made for it (libcontainer/initfds.go)
// and its own pid as the runtime sees it, for the seccomp listener.
type inherited struct {
	console  *os.File // nil without process.terminal
	listener *os.File // nil unless a seccomp rule notifies
	hostPid  int
}

// takeInherited reads the extra fds from the environment. It must run
// before pivot_root: /proc is still the runtime's then.
func takeInherited(cfg *configs.Config) (*inherited, error) {
	s := &inherited{}
	var err error
	if cfg.Process.Terminal {
		if s.console, err = passedFile(bootstrap.EnvConsoleFd, "the console socket"); err != nil {
			return nil, fmt.Errorf("process.terminal: %w", err)
		}
	}
	if cfg.Seccomp != nil && cfg.Seccomp.UsesNotify() {
		if s.listener, err = passedFile(bootstrap.EnvListenerFd, "the seccomp listener"); err != nil {
			return nil, fmt.Errorf("linux.seccomp.listenerPath: %w", err)
		}
		self, err := os.Readlink("/proc/self")
		if err != nil {
			return nil, fmt.Errorf("linux.seccomp.listenerPath: my pid in the runtime: %w", err)
		}
		if s.hostPid, err = strconv.Atoi(self); err != nil {
			return nil, fmt.Errorf("linux.seccomp.listenerPath: /proc/self is %q", self)
		}
	}
	return s, nil
}

// passedFile is the extra fd named by env, a connection to what.
func passedFile(env, what string) (*os.File, error) {
	if os.Getenv(env) == "" {
		return nil, fmt.Errorf("the parent passed no connection to %s", what)
	}
	return inheritedFile(env)
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
