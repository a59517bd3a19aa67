package libcontainer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/hooks"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/notify"
	"github.com/husk-runtime/husk/libcontainer/proc"
	"github.com/husk-runtime/husk/libcontainer/trace"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Start lets a created container's init exec the process: first the
// startContainer hooks run in the container; then init, blocked opening
// exec.fifo for writing, is released by opening it for reading, and what
// init writes says it got that far. Then the poststart hooks run. A
// failed startContainer or poststart hook kills init: the container is
// stopped, and the start fails with the hook's error.
func (c *Container) Start() error {
	if _, err := c.check(OpStart); err != nil {
		return err
	}
	if err := c.runStartHooks(); err != nil {
		if kerr := c.kill(); kerr != nil {
			logrus.Warn(kerr)
		}
		return fmt.Errorf("start container %s: %w", c.ID, err)
	}
	path := filepath.Join(c.dir, fifoName)
	f, err := openExecFifo(path, c.State.InitPid)
	if err != nil {
		return fmt.Errorf("start container %s: %w", c.ID, err)
	}
	defer f.close()
	if err := f.await(); err != nil {
		return fmt.Errorf("start container %s: %w", c.ID, err)
	}
	trace.Mark("fifo-wait")
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if err := c.runPoststart(); err != nil {
		if kerr := c.kill(); kerr != nil {
			logrus.Warn(kerr)
		}
		return fmt.Errorf("start container %s: %w", c.ID, err)
	}
	return nil
}

// runStartHooks runs the startContainer hooks, each launched into the
// created container as an exec is (launchIn): its namespaces and cgroups,
// the process's user, capabilities, seccomp filter and cwd, as runc runs
// them from init once it dropped its privileges; the hook's own path and
// args, its own environment or else the process's (as runc), the
// container's state on stdin (its pid as seen in the container).
func (c *Container) runStartHooks() error {
	cfg := c.State.Config
	if cfg == nil || len(cfg.Hooks[configs.StartContainer]) == 0 {
		return nil
	}
	if c.State.partial { // the process and the filter were skipped
		full, err := loadState(c.dir, loadFull)
		if err != nil {
			return err
		}
		cfg = full.Config
	}
	cfg, err := launch.WithCompiledSeccomp(cfg)
	if err != nil {
		return err
	}
	st := cfg.SpecState(specs.StateCreated, proc.NsPid(c.State.InitPid))
	return hooks.RunWith(configs.StartContainer, cfg.Hooks[configs.StartContainer], st,
		func(h configs.Hook, stdin []byte, out io.Writer) error { return c.runHookIn(cfg, h, stdin, out) })
}

// runHookIn runs hook h in the container and waits for it, killing it
// once its timeout passed.
func (c *Container) runHookIn(cfg *configs.Config, h configs.Hook, stdin []byte, out io.Writer) error {
	p := cfg.Process.Clone()
	p.Args = h.Args
	if len(p.Args) == 0 {
		p.Args = []string{h.Path}
	}
	if h.Env != nil {
		p.Env = h.Env
	}
	p.Terminal = false
	hc := *cfg
	hc.Process, hc.Hooks = p, nil
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		return err
	}
	defer outR.Close()
	pid, err := c.launchIn(&hc, launch.Options{Exec: true, Path: h.Path, ExactEnv: h.Env != nil},
		&ExecOpts{Stdin: inR, Stdout: outW, Stderr: outW})
	inR.Close()
	outW.Close()
	if err != nil {
		return err
	}
	go func() {
		inW.Write(stdin)
		inW.Close()
	}()
	copied := make(chan struct{})
	go func() {
		io.Copy(out, outR)
		close(copied)
	}()
	var timedOut atomic.Bool
	if h.Timeout > 0 {
		t := time.AfterFunc(time.Duration(h.Timeout)*time.Second, func() {
			timedOut.Store(true)
			unix.Kill(pid, unix.SIGKILL)
		})
		defer t.Stop()
	}
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	select { // what it printed, unless something it started holds the pipe
	case <-copied:
	case <-time.After(time.Second):
	}
	switch {
	case timedOut.Load():
		return hooks.TimedOut(h.Timeout)
	case ws.Signaled():
		return fmt.Errorf("signal: %v", ws.Signal())
	case ws.ExitStatus() != 0:
		return fmt.Errorf("exit status %d", ws.ExitStatus())
	}
	return nil
}

// execFifo is the reading end of a container's exec fifo, and a pidfd
// of its init.
type execFifo struct {
	fifo, pidfd int
	pid         int
}

// openExecFifo opens the exec fifo at path, which releases init (pid).
func openExecFifo(path string, pid int) (*execFifo, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	fifo, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(pidfd)
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &execFifo{fifo: fifo, pidfd: pidfd, pid: pid}, nil
}

func (f *execFifo) close() {
	unix.Close(f.fifo)
	unix.Close(f.pidfd)
}

// await waits until init writes its byte to the fifo, or dies, and then
// until init's end of the fifo closes: it is close-on-exec, so the
// process has been exec'd (or init is gone) when it does, and the
// poststart hooks may run. Text after the byte says why the execve
// failed: the container started, its process exits 127 (launch.LogExecFailed).
func (f *execFifo) await() error {
	fds := []unix.PollFd{{Fd: int32(f.fifo), Events: unix.POLLIN}, {Fd: int32(f.pidfd), Events: unix.POLLIN}}
	started := false
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return fmt.Errorf("poll exec fifo: %w", err)
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			var b [bootstrap.FifoMsgMax]byte
			if n, _ := unix.Read(f.fifo, b[:]); n > 0 {
				msg := b[:n]
				if !started {
					if msg[0] != bootstrap.FifoGo {
						return errors.New(string(msg))
					}
					logrus.Debugf("container init (pid %d) started its process; waiting for its execve", f.pid)
					started, msg = true, msg[1:]
				}
				if len(msg) > 0 {
					launch.LogExecFailed(string(msg))
				}
			}
		}
		if fds[0].Revents&unix.POLLHUP != 0 || fds[1].Revents != 0 {
			if started {
				return nil
			}
			return fmt.Errorf("container init (pid %d) exited before it could exec the process", f.pid)
		}
	}
}

// The hooks husk runs in the runtime's namespaces, from the parent (pid 1
// runs createContainer itself, nsenter/hooks.c; startContainer hooks are
// launched into the container below).
// prestart and createRuntime run on init's CREATE_HOOKS request (the
// protocol table in libcontainer/bootstrap), which init sends only when
// there are such hooks or a pids limit (createSteps, drivers.go); a
// failing hook makes the parent answer nothing: it kills init and undoes
// the create.

// hookState is the container's hook state (hooks only run for a state
// with a config: see hooks).
func (c *Container) hookState(status specs.ContainerState, pid int) specs.State {
	if c.State == nil || c.State.Config == nil {
		return specs.State{ID: c.ID, Status: status, Pid: pid}
	}
	return c.State.Config.SpecState(status, pid)
}

// hooks are the container's hooks of kind.
func (c *Container) hooks(kind configs.HookKind) []configs.Hook {
	if c.State == nil || c.State.Config == nil {
		return nil
	}
	return c.State.Config.Hooks[kind]
}

// runCreateRuntimeHooks runs prestart, then createRuntime, for init pid, while
// init waits before pivot_root. Any failure fails the create.
func (c *Container) runCreateRuntimeHooks(pid int) error {
	st := c.hookState(specs.StateCreating, pid)
	for _, kind := range []configs.HookKind{configs.Prestart, configs.CreateRuntime} {
		if err := hooks.Run(kind, c.hooks(kind), st, hooks.InheritEnv); err != nil {
			return err
		}
	}
	return nil
}

// runPoststart runs the poststart hooks once the process runs, stopping
// at the first that fails: its error fails the start, which stops the
// container (runtime-spec 1.3.0's lifecycle, as runc and crun).
func (c *Container) runPoststart() error {
	if len(c.hooks(configs.Poststart)) == 0 {
		return nil
	}
	st := c.hookState(specs.StateRunning, c.State.InitPid)
	return hooks.Run(configs.Poststart, c.hooks(configs.Poststart), st, hooks.InheritEnv)
}

// runPoststop runs the poststop hooks when the container is deleted. A
// failure is logged and ignored, as the runtime-spec says.
func (c *Container) runPoststop() {
	if len(c.hooks(configs.Poststop)) == 0 {
		return
	}
	st := c.hookState(specs.StateStopped, 0)
	for _, err := range hooks.RunAll(configs.Poststop, c.hooks(configs.Poststop), st, hooks.InheritEnv) {
		logrus.Warnf("container %s: %v", c.ID, err)
	}
}

// NotifyRelay binds the notify socket of a container made while
// NOTIFY_SOCKET was set (package notify), when husk has one now; nil when
// there is nothing to relay. Called before Start, so the socket is there
// when the process runs.
func (c *Container) NotifyRelay() (*notify.Relay, error) {
	return notify.Listen(c.dir, notify.HostSocket())
}
