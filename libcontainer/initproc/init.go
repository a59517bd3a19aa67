package initproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/trace"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// OpenPty makes the container's pty and sends its master over the
// console socket sock; it returns the slave (nsenter.OpenPty, the
// launcher's own, which init.go passes in: only init.go imports nsenter).
type OpenPty func(sock int, hasSize bool, rows, cols uint16, uid uint32) (int, error)

// Init is Go init. It builds the container, hands over to pid 1 and
// exits 0; or it reports its error to the parent and exits 1.
func Init(openPty OpenPty) {
	sock, err := inheritedFile(bootstrap.EnvInitPipe)
	if err != nil {
		fmt.Fprintln(os.Stderr, "husk init:", err)
		os.Exit(1)
	}
	if logw, err := inheritedFile(bootstrap.EnvLogPipe); err == nil {
		logrus.SetOutput(logPipe{logw})
		logrus.SetFormatter(lineFormatter{})
		// Debug records only when the parent logs them (--debug).
		if os.Getenv(bootstrap.EnvLogDebug) != "" {
			logrus.SetLevel(logrus.DebugLevel)
		}
	}
	if err := build(hostKernel(openPty), sock); err != nil {
		report(sock, err, os.Stderr)
		os.Exit(1)
	}
	os.Exit(0)
}

// report sends init's error to the parent, which says it. When the
// parent cannot take it, init says it on stderr itself, unless the
// parent hung up: then it gave up for a reason of its own, which it
// says, and one more line before it would hide it (read config: EOF).
func report(sock *os.File, err error, stderr io.Writer) {
	serr := bootstrap.Send(sock, bootstrap.SyncError, []byte(err.Error()))
	switch {
	case serr == nil:
	case errors.Is(err, io.EOF), errors.Is(serr, unix.EPIPE), errors.Is(serr, unix.ECONNRESET):
		logrus.Debugf("the parent hung up: %v", err)
	default:
		fmt.Fprintln(stderr, "husk init:", err)
	}
}

// build receives the config and builds the container, then hands the
// root and the pty slave over to pid 1. Every kernel call goes through k.
func build(k *kernel, sock *os.File) error {
	cfg, flags, err := receiveConfig(sock)
	if err != nil {
		return err
	}
	side, err := takeInherited(cfg)
	if err != nil {
		return err
	}
	trace.Mark("config")
	// The createRuntime and createContainer hooks run before pivot_root.
	hooks := func() error {
		trace.Mark("rootfs")
		defer trace.Mark("hooks")
		return atMountHooks(sock, cfg, flags&bootstrap.ConfigAskHooks != 0)
	}
	sources := func(i int) (int, error) { return askMountSource(sock, i) }
	// The network before the rootfs, as runc: the createRuntime and
	// createContainer hooks see lo up.
	if newNetNamespace(cfg) {
		if err := k.loopbackUp(); err != nil {
			return fmt.Errorf("linux.namespaces: new network namespace: %w", err)
		}
	}
	// Without a mount namespace of its own the container's console is a
	// pty of the host's /dev/ptmx, made before the chroot, and has no
	// /dev/console (a mount there would land on the host's tree): as runc
	// runs that config. With one, pid 1 makes it in the container.
	_, ownMounts := cfg.Namespace(configs.NEWNS)
	slave := -1
	if !ownMounts {
		if slave, err = k.setupConsole(cfg, side); err != nil {
			return err
		}
	}
	if err := k.setupRootfs(cfg, hooks, sources); err != nil {
		return err
	}
	// Pid 1 finishes the container after the hand-over: the console,
	// /dev and "/" read-only, host and domain names, sysctls, read-only
	// and masked paths (nsenter/pty.c, final.c, system.c).
	trace.Mark("setup")
	return k.handOver(side.launcher, slave, k.takeDevNull())
}

// receiveConfig reads the CONFIG the parent sends: its flags and the
// config.
func receiveConfig(sock *os.File) (*configs.Config, bootstrap.ConfigFlags, error) {
	t, payload, err := bootstrap.Recv(sock)
	if err != nil {
		return nil, 0, fmt.Errorf("read config: %w", err)
	}
	if t != bootstrap.SyncConfig {
		return nil, 0, fmt.Errorf("expected CONFIG from the parent, got %s", t)
	}
	flags, data, err := bootstrap.ParseConfigPayload(payload)
	if err != nil {
		return nil, 0, err
	}
	var cfg configs.Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, 0, fmt.Errorf("decode config: %w", err)
	}
	return &cfg, flags, nil
}

// The hand-over's flags (nsenter/run.c): which fds follow the root.
const (
	handOverSlave   = 1
	handOverDevNull = 2
)

// handOver sends pid 1 the container's root (an O_PATH fd of "/": after
// pivot_root pid 1 is there already, after a chroot it is not), the pty
// slave and the host's /dev/null cloned before pivot_root (to mask files
// with), each when there is one (>= 0): one message, a byte of flags
// saying which fds follow the root, with SCM_RIGHTS.
func (k *kernel) handOver(launcher *os.File, slave, devNull int) error {
	root, err := k.openRoot()
	if err != nil {
		return fmt.Errorf("hand over to pid 1: open /: %w", err)
	}
	fds, flags := []int{root}, byte(0)
	if slave >= 0 {
		fds, flags = append(fds, slave), flags|handOverSlave
	}
	if devNull >= 0 {
		fds, flags = append(fds, devNull), flags|handOverDevNull
	}
	if err := k.sendmsg(int(launcher.Fd()), []byte{flags}, unix.UnixRights(fds...)); err != nil {
		return fmt.Errorf("hand over to pid 1: %w", err)
	}
	return nil
}

// lineFormatter writes a record as the JSON line the parent reads, as
// nsexec writes its own: {"level":"debug","msg":"..."}. The parent logs
// it with its own time and fields, so none are sent (logrus's
// JSONFormatter formatted the time, loading the time zone file, for
// nothing).
type lineFormatter struct{}

func (lineFormatter) Format(e *logrus.Entry) ([]byte, error) {
	msg, err := json.Marshal(e.Message)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(msg)+32)
	line = append(line, `{"level":"`...)
	line = append(line, e.Level.String()...)
	line = append(line, `","msg":`...)
	line = append(line, msg...)
	return append(line, "}\n"...), nil
}

// logPipe is init's end of the log pipe. What init fails to write is
// dropped, never reported on stderr, which is the container's stdio.
type logPipe struct{ f *os.File }

func (l logPipe) Write(p []byte) (int, error) {
	l.f.Write(p)
	return len(p), nil
}
