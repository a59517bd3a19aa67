package initproc

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/husk-runtime/husk/libcontainer/trace"
	"github.com/sirupsen/logrus"
)

// Init is `husk init`, the first process of a container, or a process
// exec'd into one, once nsexec has put it into its namespaces. It sets up
// what the parent's config asks, reports READY and execs the process (a
// container's init first waits on exec.fifo for `start`). It returns only
// by exiting.
func Init() {
	// Credentials and capabilities are per thread: build and exec from one.
	runtime.LockOSThread()
	perr := protectInit() // first: see protect.go
	sock, err := inheritedFile(bootstrap.EnvInitPipe)
	if err == nil {
		err = perr
	}
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
	if os.Getenv(bootstrap.EnvInitType) == bootstrap.InitTypeExec {
		err = initExec(sock)
	} else {
		err = initContainer(sock)
	}
	// Both only return on failure, before READY.
	if serr := bootstrap.Send(sock, bootstrap.SyncError, []byte(err.Error())); serr != nil {
		fmt.Fprintln(os.Stderr, "husk init:", err)
	}
	os.Exit(1)
}

// receiveConfig reads the CONFIG the parent sends first, moves init to
// the process's initial CPUs and takes what the parent passed for it.
func receiveConfig(sock *os.File) (*configs.Config, *inherited, error) {
	t, payload, err := bootstrap.Recv(sock)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	if t != bootstrap.SyncConfig {
		return nil, nil, fmt.Errorf("expected CONFIG from the parent, got %s", t)
	}
	var cfg configs.Config
	if err := json.Unmarshal(payload, &cfg); err != nil {
		return nil, nil, fmt.Errorf("decode config: %w", err)
	}
	if err := applyInitialCPUAffinity(cfg.Process); err != nil {
		return nil, nil, err
	}
	side, err := takeInherited(&cfg)
	if err != nil {
		return nil, nil, err
	}
	trace.Mark("config")
	return &cfg, side, nil
}

// initContainer builds the container, then runs its process on `start`.
func initContainer(sock *os.File) error {
	cfg, side, err := receiveConfig(sock)
	if err != nil {
		return err
	}
	// The createRuntime and createContainer hooks run before pivot_root.
	hooks := func() error {
		trace.Mark("rootfs")
		defer trace.Mark("hooks")
		return atMountHooks(sock, cfg)
	}
	sources := func(i int) (int, error) { return askMountSource(sock, i) }
	if err := rootfs.SetupWith(cfg, hooks, sources); err != nil {
		return err
	}
	if err := setupConsole(cfg, side); err != nil {
		return err
	}
	if err := setupSystem(cfg); err != nil {
		return err
	}
	if err := rootfs.Finalize(cfg); err != nil {
		return err
	}
	trace.Mark("setup")
	return setupAndExecve(cfg, side, sock, func(beforeHooks func() error, env []string) error {
		return waitForStart(cfg, beforeHooks, env)
	})
}

// initExec runs a process in a container that exists: nsexec joined its
// namespaces and the parent its cgroups; only the process is left to set.
func initExec(sock *os.File) error {
	cfg, side, err := receiveConfig(sock)
	if err != nil {
		return err
	}
	if err := setupConsole(cfg, side); err != nil {
		return err
	}
	return setupAndExecve(cfg, side, sock, nil)
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

// logPipe is init's end of the log pipe. A created container's parent
// (husk create) is gone once init waits for start: what init logs later
// is dropped, never reported on stderr, which is the container's stdio.
type logPipe struct{ f *os.File }

func (l logPipe) Write(p []byte) (int, error) {
	l.f.Write(p)
	return len(p), nil
}
