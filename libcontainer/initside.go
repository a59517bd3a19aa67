package libcontainer

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/console"
	"github.com/husk-runtime/husk/libcontainer/hooks"
	"github.com/husk-runtime/husk/libcontainer/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// initSide is what init takes from the runtime's side before it pivots
// into the rootfs: the connections the parent made for it (initextras.go)
// and its own pid as the runtime sees it, for the seccomp listener.
type initSide struct {
	console  *os.File // nil without process.terminal
	listener *os.File // nil unless a seccomp rule notifies
	hostPid  int
}

// takeInitSide reads the extra fds from the environment. It must run
// before pivot_root: /proc is still the runtime's then.
func takeInitSide(cfg *configs.Config) (*initSide, error) {
	s := &initSide{}
	var err error
	if cfg.Process.Terminal {
		if s.console, err = passedFile(envConsoleFd, "the console socket"); err != nil {
			return nil, fmt.Errorf("process.terminal: %w", err)
		}
	}
	if cfg.Seccomp != nil && cfg.Seccomp.UsesNotify() {
		if s.listener, err = passedFile(envListenerFd, "the seccomp listener"); err != nil {
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

// createHooks runs when the rootfs is mounted, before pivot_root: the
// parent runs prestart and createRuntime (in the runtime's namespaces),
// then init runs createContainer (in the container's, paths resolved in
// the runtime's mount tree, which init still sees).
func createHooks(sock *os.File, cfg *configs.Config) error {
	if len(cfg.Hooks[configs.Prestart])+len(cfg.Hooks[configs.CreateRuntime]) > 0 {
		if err := bootstrap.Send(sock, bootstrap.SyncCreateHooks, nil); err != nil {
			return err
		}
		t, payload, err := bootstrap.Recv(sock)
		if err != nil {
			return fmt.Errorf("wait for the createRuntime hooks: %w", err)
		}
		if t != bootstrap.SyncCreateHooksDone {
			return fmt.Errorf("expected CREATE_HOOKS_DONE from the parent, got %s %q", t, payload)
		}
	}
	st := configState(cfg, specs.StateCreating, os.Getpid())
	return hooks.Run(configs.CreateContainer, cfg.Hooks[configs.CreateContainer], st, hooks.EmptyEnv)
}

// startContainerHooks run in the container once `start` came, before the
// process is executed.
func startContainerHooks(cfg *configs.Config) error {
	st := configState(cfg, specs.StateCreated, os.Getpid())
	return hooks.Run(configs.StartContainer, cfg.Hooks[configs.StartContainer], st, hooks.EmptyEnv)
}

// setupConsole gives the process the container's pty (process.terminal).
func setupConsole(cfg *configs.Config, side *initSide) error {
	p := cfg.Process
	if !p.Terminal {
		return nil
	}
	defer side.console.Close()
	return console.Setup(side.console, p.ConsoleSize, p.User.UID)
}

// loadSeccomp loads the compiled filter and hands a notify fd to the
// listener. The message is built first so that, once the filter is in,
// init makes no syscall but sendmsg before it execs.
func loadSeccomp(cfg *configs.Config, side *initSide) error {
	s := cfg.Seccomp
	var msg []byte
	if side.listener != nil {
		var err error
		st := configState(cfg, specs.StateCreating, side.hostPid)
		if msg, err = seccomp.ListenerMessage(s.ListenerMetadata, side.hostPid, st); err != nil {
			return err
		}
	}
	fd, err := seccomp.Load(s.Program)
	if err != nil {
		return err
	}
	if fd < 0 {
		return nil
	}
	if side.listener == nil {
		unix.Close(fd)
		return fmt.Errorf("linux.seccomp: the filter has a listener fd but no listener to send it to")
	}
	// Both fds are close-on-exec: no close(2) needed under the filter.
	return seccomp.SendToListener(int(side.listener.Fd()), fd, msg)
}

// configState is the runtime-spec state as init knows it from its config,
// for the hooks it runs and the seccomp listener.
func configState(cfg *configs.Config, status specs.ContainerState, pid int) specs.State {
	return specs.State{
		Version:     cfg.OCIVersion,
		ID:          cfg.ID,
		Status:      status,
		Pid:         pid,
		Bundle:      cfg.Bundle,
		Annotations: cfg.Annotations,
	}
}
