package initproc

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"golang.org/x/sys/unix"
)

// protectInit is the first thing `husk init` does in Go. From here to its
// execve, init is a privileged process inside the container, and the
// container's other processes (a created container's `husk exec`s, or the
// processes of a running one that an exec joins) must reach nothing of it.
//
//   - Non-dumpable: a process in the container can then neither
//     PTRACE_ATTACH to init (and inject code that runs with init's
//     capabilities, before its seccomp filter), nor open /proc/<init>/fd,
//     mem, environ, exe or cwd: all of these check ptrace access, which a
//     non-dumpable target grants only with CAP_SYS_PTRACE over it. execve
//     of the container's process makes it dumpable again, as any process.
//     (It is set here and not in nsexec: the parent writes a new user
//     namespace's id maps to /proc/<pid>/ before Go starts, which a
//     non-dumpable process would refuse to an unprivileged parent. Until
//     here init holds every capability, so the capability check of ptrace
//     already keeps the container's processes out.)
//   - Only the fds of the contract survive: stdio, the preserved fds
//     (--preserve-fds, LISTEN_FDS) numbered 3 up to the init socket, and
//     init's own, named in its environment and made close-on-exec. Any
//     other fd without close-on-exec leaked from husk's caller through the
//     parent (CVE-2024-21626: a directory fd there is the host's
//     filesystem for process.cwd /proc/self/fd/N) and is closed. The ones
//     with close-on-exec are the Go runtime's (epoll, eventfd); they end at
//     execve. The Go runtime's cgroup CPU files (GOMAXPROCS, Go >= 1.25)
//     are not among them: `//go:debug containermaxprocs=0` (init.go) makes
//     it close them before main.
func protectInit() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return closeStrayFds()
}

// ownFdEnvs name init's own fds (libcontainer/bootstrap's table).
var ownFdEnvs = []string{
	bootstrap.EnvInitPipe, bootstrap.EnvLogPipe, bootstrap.EnvFifoFd,
	bootstrap.EnvConsoleFd, bootstrap.EnvListenerFd,
}

// closeStrayFds closes every fd from the init socket's number up that is
// not one of init's own and has no close-on-exec, and marks init's own
// close-on-exec.
func closeStrayFds() error {
	first, err := strconv.Atoi(os.Getenv(bootstrap.EnvInitPipe))
	if err != nil || first < 3 {
		return fmt.Errorf("%s=%q: not an inherited fd", bootstrap.EnvInitPipe, os.Getenv(bootstrap.EnvInitPipe))
	}
	own := map[int]bool{}
	for _, env := range ownFdEnvs {
		if fd, err := strconv.Atoi(os.Getenv(env)); err == nil {
			own[fd] = true
		}
	}
	fds, err := openFds()
	if err != nil {
		return err
	}
	for _, fd := range fds {
		switch {
		case fd < first:
			// stdio and the preserved fds: the process's.
		case own[fd]:
			unix.CloseOnExec(fd)
		default:
			flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			if err == nil && flags&unix.FD_CLOEXEC == 0 {
				unix.Close(fd)
			}
		}
	}
	return nil
}

// openFds lists the process's open fds. /proc is still the runtime's
// here (init runs this before it builds the rootfs or joins a container's
// /proc).
func openFds() ([]int, error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil, fmt.Errorf("list my fds: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list my fds: %w", err)
	}
	fds := make([]int, 0, len(names))
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd != int(d.Fd()) {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}
