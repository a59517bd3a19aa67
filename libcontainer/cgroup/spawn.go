package cgroup

import (
	"fmt"
	"os"

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
