package cgroup

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// main is the manager doing the container-wide work: v1 when the host
// has v1 hierarchies, v2 otherwise.
func (m *Manager) main() cgroups.Manager {
	if m.v1 != nil {
		return m.v1
	}
	return m.v2
}

// Freeze stops every process of the container (v1 freezer, or
// cgroup.freeze on v2) and returns once they are stopped.
func (m *Manager) Freeze() error {
	if err := m.main().Freeze(cgroups.Frozen); err != nil {
		return fmt.Errorf("freeze cgroup %s: %w", m.describe(), err)
	}
	return nil
}

// Thaw lets the processes of a frozen container run again.
func (m *Manager) Thaw() error {
	if err := m.main().Freeze(cgroups.Thawed); err != nil {
		return fmt.Errorf("thaw cgroup %s: %w", m.describe(), err)
	}
	return nil
}

// Frozen reports whether the container's cgroup is frozen (or freezing).
func (m *Manager) Frozen() (bool, error) {
	st, err := m.main().GetFreezerState()
	if err != nil {
		return false, err
	}
	return st == cgroups.Frozen, nil
}

// Pids lists every process of the container, sub-cgroups included.
func (m *Manager) Pids() ([]int, error) {
	pids, err := m.main().GetAllPids()
	if gone(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the processes of cgroup %s: %w", m.describe(), err)
	}
	return pids, nil
}

// AddPid moves pid (an exec'd process) into every cgroup of the
// container.
func (m *Manager) AddPid(pid int) error {
	for _, mgr := range []cgroups.Manager{m.v1, m.v2} {
		if mgr == nil || (mgr == m.v2 && m.v1 != nil) {
			continue // on a hybrid host v1 joins the unified dir too
		}
		if err := mgr.AddPid("", pid); err != nil {
			return fmt.Errorf("move pid %d into cgroup %s: %w", pid, m.describe(), err)
		}
	}
	return nil
}

// Signal sends sig to every process of the container. The cgroup is
// frozen meanwhile (when the host has a freezer), so no process forks a
// child that escapes the signal; it is left as it was found.
func (m *Manager) Signal(sig unix.Signal) error {
	if sig == unix.SIGKILL && m.killAll() {
		return nil
	}
	frozen, _ := m.Frozen() // unknown: try to freeze
	froze := false
	if !frozen {
		froze = m.Freeze() == nil
	}
	pids, err := m.Pids()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, pid := range pids {
		if err := unix.Kill(pid, sig); err != nil && err != unix.ESRCH {
			errs = append(errs, fmt.Errorf("kill %d with %s: %w", pid, unix.SignalName(sig), err))
		}
	}
	if froze {
		if err := m.Thaw(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killAll writes cgroup.kill (pure v2, Linux 5.14): the kernel SIGKILLs
// every process of the cgroup and its children at once, frozen or not, and
// none can fork away meanwhile. It reports whether it could.
func (m *Manager) killAll() bool {
	if m.layout != V2 || m.v2 == nil {
		return false
	}
	err := cgroups.WriteFile(m.v2.Path(""), "cgroup.kill", "1")
	return err == nil
}

// KillAll SIGKILLs every process of the container, thaws it (a frozen
// process cannot die) and waits until the cgroup is empty.
func (m *Manager) KillAll(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		pids, err := m.Pids()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if err := m.Signal(unix.SIGKILL); err != nil {
			return err
		}
		if frozen, _ := m.Frozen(); frozen {
			if err := m.Thaw(); err != nil {
				return err
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: processes %v still there %s after SIGKILL", m.describe(), pids, timeout)
		}
		time.Sleep(delay)
	}
}

// gone reports an error from a cgroup that no longer exists: ENOENT, or
// ENODEV from reading a directory removed while it was open (systemd
// removes an emptied scope's cgroup on its own, at any moment).
func gone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENODEV)
}

// KillAndDestroy kills every process of the container and removes its
// cgroups, within timeout. A process may enter them after KillAll found
// them empty (an exec started before a delete: exec holds no lock, and
// its husk init is born in the cgroups or writes itself into them), and
// rmdir then fails with EBUSY: what is in any of them is killed, and the
// removal tried again.
func (m *Manager) KillAndDestroy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := m.KillAll(time.Until(deadline)); err != nil {
			return err
		}
		err := m.Destroy()
		if err == nil || m.systemd != "" || time.Now().After(deadline) {
			return err
		}
		pids := m.strayPids()
		logrus.Debugf("cgroup %s: %v (processes %v entered after the kill); killing them and trying again", m.describe(), err, pids)
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// strayPids lists the processes in any of the container's cgroup
// directories, sub-cgroups included (Pids reads one hierarchy only).
func (m *Manager) strayPids() []int {
	var all []int
	for _, dir := range m.Paths() {
		pids, err := cgroups.GetAllPids(dir)
		if err == nil {
			all = append(all, pids...)
		}
	}
	return all
}
