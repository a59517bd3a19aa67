package launch

import (
	"os"
	"os/signal"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

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
			WaitForwardedLogs()
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
