package libcontainer

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Init is `husk init`, the first process of a container, or a process
// exec'd into one, once nsexec has put it into its namespaces. It sets up
// what the parent's config asks, reports READY and execs the process (a
// container's init first waits on exec.fifo for `start`). It returns only
// by exiting.
func Init() {
	// Credentials and capabilities are per thread: build and exec from one.
	runtime.LockOSThread()
	sock, err := inheritedFile(bootstrap.EnvInitPipe)
	if err != nil {
		fmt.Fprintln(os.Stderr, "husk init:", err)
		os.Exit(1)
	}
	if logw, err := inheritedFile(bootstrap.EnvLogPipe); err == nil {
		logrus.SetOutput(logw)
		logrus.SetFormatter(&logrus.JSONFormatter{})
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

// inheritedFile opens the fd named by environment variable env.
func inheritedFile(env string) (*os.File, error) {
	fd, err := strconv.Atoi(os.Getenv(env))
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not an inherited fd", env, os.Getenv(env))
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), env), nil
}

// receiveConfig reads the CONFIG the parent sends first, moves init to
// the process's initial CPUs and takes what the parent passed for it.
func receiveConfig(sock *os.File) (*configs.Config, *initSide, error) {
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
	side, err := takeInitSide(&cfg)
	if err != nil {
		return nil, nil, err
	}
	return &cfg, side, nil
}

// initContainer builds the container, then runs its process on `start`.
func initContainer(sock *os.File) error {
	cfg, side, err := receiveConfig(sock)
	if err != nil {
		return err
	}
	// The createRuntime and createContainer hooks run before pivot_root.
	if err := rootfs.SetupWith(cfg, func() error { return createHooks(sock, cfg) }); err != nil {
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
	return execProcess(cfg, side, sock, func() error { return waitForStart(cfg) })
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
	return execProcess(cfg, side, sock, nil)
}

// execProcess gives init the process's limits, filter, credentials and
// working directory, reports READY, waits for waitStart (if any) and
// execs the process. It returns only errors from before READY.
func execProcess(cfg *configs.Config, side *initSide, sock *os.File, waitStart func() error) error {
	p := cfg.Process
	if err := setupProcess(cfg); err != nil {
		return err
	}
	if err := applyProcessAttrs(cfg, p); err != nil {
		return err
	}
	// Without no_new_privs, loading a filter needs CAP_SYS_ADMIN: load it
	// while init still has it; the filter then also applies to the rest
	// of init (as in runc). With no_new_privs it is loaded last, below.
	if cfg.Seccomp != nil && !p.NoNewPrivileges {
		if err := loadSeccomp(cfg, side); err != nil {
			return err
		}
	}
	if err := setupCredentials(p); err != nil {
		return err
	}
	if err := unix.Chdir(p.Cwd); err != nil {
		return fmt.Errorf("process.cwd: chdir %q: %w", p.Cwd, err)
	}
	env := processEnv(p)
	path, err := lookPath(p.Args[0], env)
	if err != nil {
		return err
	}
	if err := bootstrap.Send(sock, bootstrap.SyncReady, nil); err != nil {
		return err
	}
	sock.Close()
	if waitStart != nil {
		if err := waitStart(); err != nil {
			failAfterReady(err)
		}
	}
	if cfg.Seccomp != nil && p.NoNewPrivileges {
		if err := loadSeccomp(cfg, side); err != nil {
			failAfterReady(err)
		}
	}
	err = unix.Exec(path, p.Args, env)
	// Only reached when execve fails, after READY: nobody waits for a
	// sync message any more.
	logrus.Errorf("exec %q: %v", path, err)
	fmt.Fprintf(os.Stderr, "husk init: exec %q: %v\n", path, err)
	os.Exit(127)
	return nil
}

// failAfterReady reports an error after READY, when the parent no longer
// listens on the init socket, and exits.
func failAfterReady(err error) {
	logrus.Error(err)
	fmt.Fprintln(os.Stderr, "husk init:", err)
	os.Exit(1)
}

// waitForStart blocks opening exec.fifo for writing until `husk start`
// opens it for reading, runs the startContainer hooks, then writes what
// start waits for: fifoGo, or why the container cannot start.
func waitForStart(cfg *configs.Config) error {
	fd, err := strconv.Atoi(os.Getenv(bootstrap.EnvFifoFd))
	if err != nil {
		return fmt.Errorf("%s: %w", bootstrap.EnvFifoFd, err)
	}
	// Reopen through /proc: the O_PATH fd was opened on the host side.
	fifo, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open exec fifo: %w", err)
	}
	unix.Close(fd)
	msg := []byte{fifoGo}
	hookErr := startContainerHooks(cfg)
	if hookErr != nil {
		msg = []byte(hookErr.Error())
		if len(msg) > fifoMsgMax {
			msg = msg[:fifoMsgMax]
		}
	}
	if _, err := unix.Write(fifo, msg); err != nil {
		return fmt.Errorf("write exec fifo: %w", err)
	}
	return hookErr
}

// setupSystem sets what belongs to the container's namespaces rather than
// to its process: host and domain name, sysctls, the session keyring.
func setupSystem(cfg *configs.Config) error {
	if cfg.Hostname != "" {
		if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
			return fmt.Errorf("hostname: sethostname %q: %w", cfg.Hostname, err)
		}
	}
	if cfg.Domainname != "" {
		if err := unix.Setdomainname([]byte(cfg.Domainname)); err != nil {
			return fmt.Errorf("domainname: setdomainname %q: %w", cfg.Domainname, err)
		}
	}
	for k, v := range cfg.Sysctl {
		path := "/proc/sys/" + strings.ReplaceAll(k, ".", "/")
		if err := os.WriteFile(path, []byte(v), 0); err != nil {
			return fmt.Errorf("linux.sysctl[%q]: write %q: %w", k, v, err)
		}
	}
	if !cfg.NoNewKeyring {
		if _, err := unix.KeyctlJoinSessionKeyring("_ses"); err != nil && err != unix.ENOSYS {
			return fmt.Errorf("join a new session keyring: %w", err)
		}
	}
	return nil
}

// setupProcess applies the process's rlimits and umask.
func setupProcess(cfg *configs.Config) error {
	p := cfg.Process
	for i, r := range p.Rlimits {
		// syscall.Setrlimit, so Go does not restore its own NOFILE limit
		// at exec over the one asked for.
		lim := &unix.Rlimit{Cur: r.Soft, Max: r.Hard}
		if err := setrlimit(r.Type, lim); err != nil {
			return fmt.Errorf("process.rlimits[%d]: setrlimit(%d, soft %d, hard %d): %w", i, r.Type, r.Soft, r.Hard, err)
		}
	}
	umask := uint32(0o022)
	if p.User.Umask != nil {
		umask = *p.User.Umask
	}
	unix.Umask(int(umask))
	return nil
}
