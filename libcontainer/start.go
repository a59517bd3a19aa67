package libcontainer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/hooks"
	"github.com/husk-runtime/husk/libcontainer/launch"
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

// Waiter waits for a foreground container's init, forwarding the signals
// husk receives to it. Make it before Create (or Exec) so that the
// signals that end a process are caught from the start.
type Waiter struct {
	sigs  chan os.Signal
	ready chan struct{} // closed once the signals in terminating are caught
	rest  chan struct{} // closed to catch every other signal
}

// terminating are the signals that end husk unless caught (and that
// users send to stop a container): caught first.
var terminating = []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT}

// catchRestAfter is how long the process runs before husk catches the
// signals outside terminating. Catching each one is a round trip with the
// Go runtime's signal thread: about 60 of them, 1 to 1.5 ms of CPU, more
// than a probe's whole `exec ID true` costs crun. A process that is done
// sooner (a probe's, a short job's) never pays it; one that runs on gets
// every signal forwarded from then on. Until then, a signal outside
// terminating does to husk what Go does to an uncaught one: SIGUSR1,
// SIGUSR2, SIGWINCH, SIGALRM and the real-time signals are dropped, not
// forwarded (as in the moments before any runtime's handler is set up).
const catchRestAfter = 10 * time.Millisecond

// NewWaiter starts catching the signals in terminating, and the others
// once Wait has waited catchRestAfter.
func NewWaiter() *Waiter {
	w := &Waiter{sigs: make(chan os.Signal, 128), ready: make(chan struct{}), rest: make(chan struct{})}
	go func() {
		signal.Notify(w.sigs, terminating...)
		close(w.ready)
		<-w.rest
		signal.Notify(w.sigs)
	}()
	return w
}

// Ready returns once the signals in terminating are caught (a nil
// Waiter: at once). Call it before the container's process runs.
func (w *Waiter) Ready() {
	if w != nil {
		<-w.ready
	}
}

// Wait forwards signals to pid until it exits (husk is its subreaper) and
// returns its exit code: the status, or 128+N when killed by signal N.
// Other orphans reparented to husk are reaped on the way. The reaping is
// a blocking wait4, not a wake-up by SIGCHLD, so it needs no signal
// caught. Signals stay caught afterwards (husk only tears down and exits;
// undoing the catch costs a thread round trip per signal). Call it once.
func (w *Waiter) Wait(pid int) int {
	exited := make(chan int, 1)
	go func() { exited <- reap(pid) }()
	rest := time.AfterFunc(catchRestAfter, func() { close(w.rest) })
	defer rest.Stop()
	for {
		select {
		case code := <-exited:
			// What init logged up to its execve, e.g. with --debug.
			launch.WaitForwardedLogs()
			return code
		case sig := <-w.sigs:
			switch sig := sig.(unix.Signal); sig {
			case unix.SIGCHLD, unix.SIGURG, unix.SIGWINCH:
				// SIGURG is the Go runtime's own preemption signal.
			default:
				unix.Kill(pid, sig)
			}
		}
	}
}

// reap waits for children, any of them, until pid exits, and returns its
// exit code.
func reap(pid int) int {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			// ECHILD: pid is not (or no longer) husk's child.
			logrus.Warnf("wait for pid %d: %v", pid, err)
			return 255
		case got == pid && ws.Signaled():
			return 128 + int(ws.Signal())
		case got == pid && ws.Exited():
			return ws.ExitStatus()
		}
	}
}
