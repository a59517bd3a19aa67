package cgroup

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// Helpers for starting a process inside the container's cgroup: born in
// it with clone3(CLONE_INTO_CGROUP) where the host is pure cgroup v2, or
// moved into it by pid elsewhere (v1 and hybrid hosts have a directory
// per controller, which one clone cannot enter).

// Create makes the container's cgroup directories without moving any
// process in: what a process born in them with CloneDir needs first.
func (m *Manager) Create() error {
	if err := m.main().Apply(-1); err != nil {
		return fmt.Errorf("create cgroup %s: %w", m.describe(), err)
	}
	return nil
}

// CloneDir opens the container's cgroup v2 directory for
// clone3(CLONE_INTO_CGROUP) (exec.Cmd's SysProcAttr.CgroupFD). It is nil
// where that cannot place a process in all of its cgroups (v1, hybrid):
// the caller then moves the process with Apply or AddPid.
func (m *Manager) CloneDir() (*os.File, error) {
	if m.layout != V2 || m.v2 == nil {
		return nil, nil
	}
	dir := m.v2.Path("")
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// ExecPidsNeeded is how many more tasks (processes and threads) `husk
// init` may take when it execs a process into a container: nsexec's fork,
// and the Go runtime's threads in init (one per P, sysmon, a spare)
// before the process's execve leaves one. Measured on a 2-CPU host: an
// exec into a container with one task works from pids.max 6, dies in the
// Go runtime (pthread_create: EAGAIN) below.
func ExecPidsNeeded() int {
	return runtime.GOMAXPROCS(0) + 4
}

// CheckPidsRoom refuses, in one line naming pids.max, a container whose
// pids limit leaves fewer than need tasks free: the Go runtime of an
// exec'd `husk init` would die creating a thread (pthread_create: EAGAIN)
// with a stack dump instead of an error.
func (m *Manager) CheckPidsRoom(need int) error {
	dir := m.v1Path("pids")
	if dir == "" && m.v2 != nil && m.unified["pids"] {
		dir = m.v2.Path("")
	}
	if dir == "" {
		return nil
	}
	limit, err := cgroups.ReadFile(dir, "pids.max")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	limit = strings.TrimSpace(limit)
	if limit == "max" {
		return nil
	}
	maxN, err1 := strconv.Atoi(limit)
	cur, err := cgroups.ReadFile(dir, "pids.current")
	curN, err2 := strconv.Atoi(strings.TrimSpace(cur))
	if err != nil || err1 != nil || err2 != nil {
		return nil // unknown: let the exec try
	}
	if maxN-curN < need {
		return fmt.Errorf("the container's pids.max %d (%d in use, in %s) leaves room for %d more tasks; starting a process in it takes up to %d: raise it (husk update --pids-limit)",
			maxN, curN, dir, max(maxN-curN, 0), need)
	}
	return nil
}
