package initproc

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/console"
	"github.com/husk-runtime/husk/libcontainer/seccomp"
	"github.com/husk-runtime/husk/libcontainer/trace"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// setupAndExecve gives init the process's limits, filter, credentials and
// working directory, reports READY, waits for waitStart (if any) and
// execs the process. It returns only errors from before READY.
func setupAndExecve(cfg *configs.Config, side *inherited, sock *os.File, waitStart func(beforeHooks func() error, env []string) error) error {
	p := cfg.Process
	if err := setupProcess(cfg); err != nil {
		return err
	}
	if err := applyProcessAttrs(cfg, p); err != nil {
		return err
	}
	// Without no_new_privs, loading a filter needs CAP_SYS_ADMIN: load it
	// while init still has it; the filter then also applies to the rest
	// of init (as in runc). With no_new_privs it is loaded late, below.
	lateSeccomp := cfg.Seccomp != nil && p.NoNewPrivileges
	if cfg.Seccomp != nil && !lateSeccomp {
		if err := loadSeccomp(cfg, side); err != nil {
			return err
		}
	}
	// As runc: cwd is entered before the user switch, so a directory only
	// root can enter works; one only the process's user can enter is
	// tried again after it.
	cwdDone, err := chdirBeforeUser(p.Cwd)
	if err != nil {
		return err
	}
	if err := setupCredentials(p); err != nil {
		return err
	}
	if !cwdDone {
		if err := unix.Chdir(p.Cwd); err != nil {
			return fmt.Errorf("process.cwd: chdir %q: %w", p.Cwd, err)
		}
	}
	env := processEnv(p)
	path, err := lookPath(p.Args[0], env)
	if err != nil {
		return err
	}
	trace.Mark("ready")
	if err := bootstrap.Send(sock, bootstrap.SyncReady, nil); err != nil {
		return err
	}
	if waitStart == nil {
		awaitExecGo(sock, p)
	}
	sock.Close()
	if waitStart != nil {
		// startContainer hooks run with the filter loaded, as in runc.
		beforeHooks := func() error {
			if !lateSeccomp {
				return nil
			}
			lateSeccomp = false
			return loadSeccomp(cfg, side)
		}
		if err := waitStart(beforeHooks, env); err != nil {
			failAfterReady(err)
		}
	}
	if lateSeccomp {
		if err := loadSeccomp(cfg, side); err != nil {
			failAfterReady(err)
		}
	}
	logrus.Debugf("execve %q", path)
	trace.Mark("execve")
	err = unix.Exec(path, p.Args, env)
	// Only reached when execve fails, after READY: nobody waits for a
	// sync message any more.
	logrus.Errorf("exec %q: %v", path, err)
	fmt.Fprintf(os.Stderr, "husk init: exec %q: %v\n", path, err)
	os.Exit(127)
	return nil
}

// chdirBeforeUser enters cwd while init is still root. It reports false
// when root may not (EACCES, EPERM: a directory of the process's user on
// a filesystem root cannot override), so the caller tries again as the
// process's user.
func chdirBeforeUser(cwd string) (bool, error) {
	err := unix.Chdir(cwd)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return false, nil
	default:
		return false, fmt.Errorf("process.cwd: chdir %q: %w", cwd, err)
	}
}

// failAfterReady reports an error after READY, when the parent no longer
// listens on the init socket, and exits.
func failAfterReady(err error) {
	logrus.Error(err)
	fmt.Fprintln(os.Stderr, "husk init:", err)
	os.Exit(1)
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

func setrlimit(resource int, lim *unix.Rlimit) error {
	return syscall.Setrlimit(resource, (*syscall.Rlimit)(lim))
}

// setupConsole gives the process the container's pty (process.terminal).
func setupConsole(cfg *configs.Config, side *inherited) error {
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
func loadSeccomp(cfg *configs.Config, side *inherited) error {
	s := cfg.Seccomp
	var msg []byte
	if side.listener != nil {
		var err error
		st := cfg.SpecState(specs.StateCreating, side.hostPid)
		if msg, err = seccomp.ListenerMessage(s.ListenerMetadata, side.hostPid, st); err != nil {
			return err
		}
	}
	fd, err := seccomp.Load(s.Program)
	if err != nil {
		return err
	}
	logrus.Debugf("seccomp filter loaded: %d instructions, flags %#x (%v)", len(s.Program.Filter)/8, s.Program.Flags, s.Flags)
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

// awaitExecGo waits, in an exec's init, for the parent to move it into
// the container's cgroups (EXEC_GO: it ran outside them so far, so that
// its Go threads never count against a pids limit). The move resets the
// CPU affinity to the cgroup's cpuset: execCPUAffinity.final is set again.
func awaitExecGo(sock *os.File, p *configs.Process) {
	t, _, err := bootstrap.Recv(sock)
	if err != nil {
		failAfterReady(fmt.Errorf("waiting for EXEC_GO: %w", err))
	}
	if t != bootstrap.SyncExecGo {
		failAfterReady(fmt.Errorf("expected EXEC_GO from the parent, got %s", t))
	}
	if a := p.CPUAffinity; a != nil && len(a.Final) > 0 {
		if err := setAffinity("process.execCPUAffinity.final", a.Final); err != nil {
			failAfterReady(err)
		}
	}
}
