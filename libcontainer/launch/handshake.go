package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// awaitHello waits for nsexec's first frame (step 0).
func awaitHello(sock *credReader) error {
	t, payload, err := bootstrap.Recv(sock)
	switch {
	case err != nil:
		return initGone("nsexec", err)
	case t == bootstrap.SyncError:
		return reported("nsexec", payload)
	case t != bootstrap.SyncHello:
		return unexpected("nsexec", t)
	}
	return nil
}

// sendBootstrap sends the encoded bootstrap message (step 1).
func sendBootstrap(sock *credReader, msg []byte) error {
	if _, err := sock.Write(msg); err != nil {
		return initGone("nsexec", fmt.Errorf("send bootstrap message: %w", err))
	}
	return nil
}

// runNsexec answers nsexec, once it has the bootstrap message, until it
// reports the pid of the forked init or process (steps 2-4 of the
// protocol table in package bootstrap). Every error is the one the user
// reads: nsexec's own text, or what the parent saw go wrong.
func runNsexec(sock *credReader, maps IDMapper) (int, error) {
	for {
		t, payload, err := bootstrap.Recv(sock)
		if err != nil {
			return 0, initGone("nsexec", err)
		}
		switch t {
		case bootstrap.SyncUsermapPls:
			pid, err := parsePid("nsexec", t, payload)
			if err != nil {
				return 0, err
			}
			if maps == nil {
				return 0, errors.New("nsexec asked for id maps, but no user namespace was to be made")
			}
			if err := maps.Write(pid); err != nil {
				return 0, err
			}
			logrus.Debugf("wrote the id maps of pid %d", pid)
			if err := bootstrap.Send(sock, bootstrap.SyncUsermapAck, nil); err != nil {
				return 0, initGone("nsexec", err)
			}
		case bootstrap.SyncPid:
			return parsePid("nsexec", t, payload)
		case bootstrap.SyncError:
			return 0, reported("nsexec", payload)
		default:
			return 0, unexpected("nsexec", t)
		}
	}
}

// parsePid reads the pid payload of message t from stage.
func parsePid(stage string, t bootstrap.SyncType, payload []byte) (int, error) {
	pid, err := bootstrap.ParsePid(payload)
	if err != nil {
		return 0, fmt.Errorf("%s sent a bad %s: %w", stage, t, err)
	}
	return pid, nil
}

// reported is the error stage sent in an ERROR message.
func reported(stage string, payload []byte) error {
	if len(payload) == 0 {
		return fmt.Errorf("%s failed without saying why", stage)
	}
	return errors.New(string(payload))
}

// unexpected is the error for a message stage should not send now.
func unexpected(stage string, t bootstrap.SyncType) error {
	return fmt.Errorf("%s sent an unexpected %s message (is husk init the same version as husk?)", stage, t)
}

// configureInit sends pid 1 how to build the container's rootfs
// (rootfsPayload) and waits for READY, running the create hooks and
// opening mount sources (mountsource.go) when pid 1 asks for them on the
// way (steps 5-6 of the protocol table).
func configureInit(sock *credReader, cfg *configs.Config, pid int, atHooks func() error) error {
	payload, err := rootfsPayload(cfg, pid, atHooks != nil)
	if err != nil {
		return err
	}
	if err := bootstrap.Send(sock, bootstrap.SyncConfig, payload); err != nil {
		return initGone("init", err)
	}
	return awaitReady(sock, cfg, pid, atHooks)
}

// awaitReady answers init until it reports READY (or an error): pid 1's
// requests on the way, then the launcher's READY (an exec builds nothing:
// nsexec's first process sends READY or ERROR). With atHooks, init was
// asked to stop at CREATE_HOOKS (bootstrap.RootfsAskHooks): atHooks runs
// then, and a READY without it is an error.
func awaitReady(sock *credReader, cfg *configs.Config, pid int, atHooks func() error) error {
	for {
		t, payload, err := bootstrap.Recv(sock)
		if err != nil {
			return initGone("init", err)
		}
		switch t {
		case bootstrap.SyncReady:
			if atHooks != nil {
				return fmt.Errorf("init sent READY without stopping at CREATE_HOOKS, as asked: the cgroup limits and the prestart and createRuntime hooks did not run")
			}
			return nil
		case bootstrap.SyncError:
			return reported("init", payload)
		case bootstrap.SyncCreateHooks:
			if atHooks == nil {
				return unexpected("init", t)
			}
			if err := atHooks(); err != nil {
				return err
			}
			atHooks = nil
			if err := bootstrap.Send(sock, bootstrap.SyncCreateHooksDone, nil); err != nil {
				return initGone("init", err)
			}
		case bootstrap.SyncMountSource:
			if err := answerMountSource(sock, pid, cfg, payload); err != nil {
				return initGone("init", err)
			}
		default:
			return unexpected("init", t)
		}
	}
}

// initGone words a broken init socket: init died without saying why
// (errGone; Start then looks at how it died).
func initGone(stage string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
		return &errGone{stage}
	}
	return fmt.Errorf("%s: %w", stage, err)
}

// errGone: husk init's stage closed the init socket without a word.
type errGone struct{ stage string }

func (e *errGone) Error() string {
	return e.stage + " exited without reporting an error (see its output above)"
}

// forwardLogs re-logs init's JSON log lines at their level. An error
// record is the launcher's failed execve (see LogExecFailed). The caller
// registers r first (forwards.add).
func forwardLogs(r *credReader) {
	defer forwards.done(r)
	sc := bufio.NewScanner(r)
	debug := logrus.IsLevelEnabled(logrus.DebugLevel)
	for sc.Scan() {
		if !debug && bootstrap.IsDebugLogLine(sc.Bytes()) {
			continue // most of init's lines (nsexec's, the launcher's), not decoded for nothing
		}
		e, err := bootstrap.ParseLogLine(sc.Bytes())
		if err != nil {
			logrus.Debugf("init: %s", sc.Text())
			continue
		}
		lvl, err := logrus.ParseLevel(e.Level)
		if err != nil {
			lvl = logrus.InfoLevel
		}
		if lvl <= logrus.ErrorLevel {
			LogExecFailed(e.Msg)
			continue
		}
		logrus.StandardLogger().Log(lvl, "init: "+e.Msg)
	}
}

// LogExecFailed logs why the process's execve failed, which the launcher
// has also printed on the process's stderr: one error record in --log,
// nothing more on husk's stderr (where logrus writes without --log).
func LogExecFailed(why string) {
	if logrus.StandardLogger().Out != os.Stderr {
		logrus.Error("init: " + why)
	}
}

// forwards are the log sockets still read. A read ends when every copy
// of init's end is closed, at the process's execve (or exit), or when
// WaitForwardedLogs shuts it down.
var forwards = &logSockets{open: map[*credReader]bool{}}

type logSockets struct {
	mu   sync.Mutex
	wg   sync.WaitGroup
	open map[*credReader]bool
}

// add counts r in before its goroutine runs: Wait may come first.
func (l *logSockets) add(r *credReader) {
	l.mu.Lock()
	l.open[r] = true
	l.wg.Add(1)
	l.mu.Unlock()
}

// done closes r, under the lock that shut keeps its fd number with.
func (l *logSockets) done(r *credReader) {
	l.mu.Lock()
	delete(l.open, r)
	r.Close()
	l.mu.Unlock()
	l.wg.Done()
}

// WaitForwardedLogs reads what init's log sockets hold and waits until
// each read has ended. Call it only once the processes are gone
// (Waiter.Wait; a created container's init holds its socket until start):
// everything husk's writers wrote is queued then. A container process
// that took a copy of the socket (issue 33, finding 4) could keep it open
// for ever and hold husk with it: each socket is shut for reading, which
// ends its read once the queue is empty (and fails the copy's writes).
func WaitForwardedLogs() {
	forwards.mu.Lock()
	for r := range forwards.open {
		if rc, err := r.File.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RD) })
		}
	}
	forwards.mu.Unlock()
	forwards.wg.Wait()
}
