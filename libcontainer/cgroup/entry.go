package cgroup

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// Entry is how a new process (a container's init, or an exec'd one)
// enters the container's cgroups without anyone moving it by pid.
//
// Moving a process by pid (cgroup.procs) takes the kernel's
// cgroup_threadgroup_rwsem for writing, and the first such write after a
// quiet spell waits for an RCU grace period: 4 to 30 ms on a 2-core host,
// the largest single cost of a start. Two ways in take no such lock:
//   - clone3(CLONE_INTO_CGROUP) into a cgroup v2 directory (Dir): the
//     process is born there;
//   - a single-threaded process writing "0" (itself) to a v1 hierarchy's
//     `tasks` file (Tasks): nsexec does so first thing, before it joins
//     or makes any namespace and before it forks, so everything it forks
//     starts inside.
//
// Pure v2 has only Dir; v1 only Tasks; hybrid both (Dir for the unified
// hierarchy).
type Entry struct {
	Dir   *os.File   // cgroup v2 directory to clone into, or nil
	Tasks []*os.File // v1 `tasks` files, opened for writing
}

// Close closes the entry's files.
func (e *Entry) Close() {
	if e == nil {
		return
	}
	if e.Dir != nil {
		e.Dir.Close()
	}
	for _, f := range e.Tasks {
		f.Close()
	}
}

// NeedsMove reports whether a process started with the entry must still
// be moved in by pid: born says whether clone3 put it in Dir.
func (e *Entry) NeedsMove(born bool) bool {
	if e == nil {
		return true
	}
	if e.Dir != nil {
		return !born // v2, or hybrid: a plain start missed the unified dir
	}
	return len(e.Tasks) == 0
}

// Entry opens the container's cgroups for a process to enter them (see
// Entry). The cgroups must exist: made by Create, or, with the systemd
// driver, the container's scope, which systemd makes with init in it (so
// Entry is for exec'd processes there). Callers without root on v1 do
// not use it: husk does not probe their rights there, and moves their
// process by pid as before.
func (m *Manager) Entry() (*Entry, error) {
	e := &Entry{}
	if m.layout == V2 || m.layout == Hybrid {
		dir, err := m.cloneDir()
		if err != nil {
			return nil, err
		}
		e.Dir = dir
	}
	if m.v1 == nil {
		return e, nil
	}
	var dirs []string
	for c, dir := range m.v1.GetPaths() {
		if c != "" && dir != "" { // "": hybrid's unified directory (Dir)
			dirs = append(dirs, dir)
		}
	}
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) { // co-mounted: cpu,cpuacct
		f, err := cgroups.OpenFile(dir, "tasks", unix.O_WRONLY)
		if errors.Is(err, os.ErrNotExist) {
			// A named hierarchy (name=systemd) Create could not make: the
			// library joins those at best effort, and so does init.
			continue
		}
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("open cgroup %s for init to join: %w", dir, err)
		}
		e.Tasks = append(e.Tasks, f)
	}
	return e, nil
}

// cloneDir opens the container's cgroup v2 directory (on hybrid hosts,
// its directory in the unified hierarchy) for clone3(CLONE_INTO_CGROUP).
func (m *Manager) cloneDir() (*os.File, error) {
	if m.v2 == nil {
		return nil, nil
	}
	dir := m.v2.Path("")
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	return os.NewFile(uintptr(fd), dir), nil
}
