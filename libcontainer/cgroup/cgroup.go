// Package cgroup is husk's one door to github.com/opencontainers/cgroups:
// it places a container in its cgroups, applies linux.resources, freezes,
// signals, measures and removes them, on cgroup v1, the hybrid layout (v1
// controllers plus cgroup2 at /sys/fs/cgroup/unified) and pure v2, decided
// at run time.
//
// The library's fs (v1) and fs2 (v2) managers do the file work; this
// package chooses between them, routes each resource to the hierarchy
// that has its controller (on a hybrid host the unified hierarchy serves
// the controllers v1 lacks), provides the device rules (a devices.allow
// list on v1, an eBPF program on v2) and words every failure with the
// config.json field and value it came from:
//
//	linux.resources.network.classID: 1048577: the net_cls controller is not available on this host
package cgroup

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
)

// Layout is how the host mounts its cgroups.
type Layout int

const (
	V1     Layout = iota // only v1 hierarchies
	Hybrid               // v1 hierarchies plus cgroup2 at /sys/fs/cgroup/unified
	V2                   // cgroup2 at /sys/fs/cgroup
)

func (l Layout) String() string {
	return [...]string{"v1", "hybrid", "v2"}[l]
}

// HostLayout reads the host's layout off /sys/fs/cgroup.
func HostLayout() Layout {
	switch {
	case cgroups.IsCgroup2UnifiedMode():
		return V2
	case cgroups.IsCgroup2HybridMode():
		return Hybrid
	}
	return V1
}

// Manager is one container's cgroups in every hierarchy of the host.
type Manager struct {
	layout Layout
	// v1 manages the v1 hierarchies (and on Hybrid joins the unified
	// one); nil on V2.
	v1 cgroups.Manager
	// v2 manages the unified directory: everything on V2; on Hybrid only
	// the controllers v1 lacks (see route). nil on V1.
	v2 cgroups.Manager
	// unified are the controllers the unified hierarchy offers.
	unified map[string]bool
	// systemd is the name of the container's systemd unit (the systemd
	// driver); "" for the cgroupfs driver.
	systemd string
	// kernelTCP is memory.kernelTCP of the config given to New, which
	// Set writes with the rest (the library has no field for it).
	kernelTCP int64
}

// New is the manager of the cgroups of container id with settings cg,
// placed by cg.Path (see configs.Cgroup). Nothing is created until Apply;
// a cgroup already there that holds processes or is frozen is refused.
func New(cg *configs.Cgroup, id string) (*Manager, error) {
	var m *Manager
	var err error
	if cg.Systemd {
		m, err = newSystemd(cg, id, nil)
	} else {
		p := cgroupPath(cg.Path, id)
		m, err = open(HostLayout(), &cgroups.Cgroup{Path: p, Resources: &cgroups.Resources{}}, nil)
	}
	if err != nil {
		return nil, err
	}
	m.kernelTCP = cg.KernelMemoryTCP
	// A cgroup that already exists must be empty and not frozen: a
	// process in it would share the container's limits and die with it,
	// and a frozen one would stop the container's init for ever. Checked
	// before the container owns the cgroup, so a refusal leaves it be.
	if err := m.checkFresh(); err != nil {
		return nil, err
	}
	return m, nil
}

// Open is the manager of cgroups made earlier, at the paths Paths
// returned then, for container id with settings cg (which say the
// driver).
func Open(paths map[string]string, cg *configs.Cgroup, id string) (*Manager, error) {
	if len(paths) == 0 {
		return nil, errors.New("no cgroup paths recorded")
	}
	if cg != nil && cg.Systemd {
		return newSystemd(cg, id, paths)
	}
	return open(HostLayout(), &cgroups.Cgroup{Resources: &cgroups.Resources{}}, paths)
}

// cgroupPath is the path a container's cgroups get: linux.cgroupsPath as
// specconv checked and cleaned it, or else the id, relative to husk's own
// cgroup as runc places it (/<id> where husk runs at a hierarchy's root; on
// v2 next to husk's own leaf). No parent of husk's own is made for each
// create and removed after the last delete (on cgroup v1 that was a mkdir
// and an rmdir more per hierarchy: docs/performance.md).
func cgroupPath(p, id string) string {
	if p == "" {
		return id
	}
	return p
}

// open makes the library's managers for layout. With paths nil they are
// computed from cg.Path.
func open(layout Layout, cg *cgroups.Cgroup, paths map[string]string) (*Manager, error) {
	m := &Manager{layout: layout}
	var err error
	switch layout {
	case V2:
		dir := ""
		if paths != nil {
			dir = paths[""]
		}
		m.v2, err = fs2.NewManager(cg, dir)
		if err != nil {
			return nil, fmt.Errorf("cgroup v2 path %q: %w", cg.Path, err)
		}
		m.unified = readControllers(fs2.UnifiedMountpoint)
	default:
		v1paths := paths
		if v1paths == nil {
			v1paths, _ = v1Paths(cg.Path, layout) // nil: the library computes them
		}
		m.v1, err = fs.NewManager(cg, v1paths)
		if err != nil {
			return nil, fmt.Errorf("cgroup v1 path %q: %w", cg.Path, err)
		}
		if layout == Hybrid {
			dir := m.v1.Path("")
			if dir == "" && paths != nil {
				// Saved by a husk that saw no unified hierarchy (it ran in
				// a mount namespace without it): the container has none.
				m.layout = V1
				return m, nil
			}
			if dir == "" {
				return nil, fmt.Errorf("cgroup path %q: no directory in the unified hierarchy", cg.Path)
			}
			m.v2, err = fs2.NewManager(&cgroups.Cgroup{Resources: &cgroups.Resources{}}, dir)
			if err != nil {
				return nil, err
			}
			m.unified = readControllers(unifiedRoot(dir))
		}
	}
	return m, nil
}

// readControllers reads dir/cgroup.controllers; nothing when it cannot.
func readControllers(dir string) map[string]bool {
	data, err := cgroups.ReadFile(dir, "cgroup.controllers")
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	for _, c := range strings.Fields(data) {
		set[c] = true
	}
	return set
}

// unifiedRoot is the mount point of the unified hierarchy dir is in.
func unifiedRoot(dir string) string {
	if strings.HasPrefix(dir, hybridMount+"/") || dir == hybridMount {
		return hybridMount
	}
	return fs2.UnifiedMountpoint
}

const hybridMount = "/sys/fs/cgroup/unified"

// Layout is the host layout the manager works on.
func (m *Manager) Layout() Layout { return m.layout }

// Systemd reports whether a systemd unit holds the container's cgroup.
func (m *Manager) Systemd() bool { return m.systemd != "" }

// Paths are the container's cgroup directories: controller -> directory,
// "" for the unified hierarchy. Record them to Open the cgroups later.
func (m *Manager) Paths() map[string]string {
	if m.v1 != nil {
		return clonePaths(m.v1.GetPaths())
	}
	return clonePaths(m.v2.GetPaths())
}

func clonePaths(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// Apply creates the cgroups (when missing) and moves pid into every one.
func (m *Manager) Apply(pid int) error {
	if m.v1 != nil {
		if err := m.v1.Apply(pid); err != nil {
			return fmt.Errorf("join cgroups %s: %w", m.describe(), err)
		}
		return nil
	}
	if err := m.v2.Apply(pid); err != nil {
		return fmt.Errorf("join cgroup %s: %w", m.v2.Path(""), err)
	}
	return nil
}

// checkFresh refuses a container cgroup that already holds processes or
// is frozen (runc's words for both).
func (m *Manager) checkFresh() error {
	// Mostly there is none yet: one lstat per hierarchy tells (another
	// error is left for GetAllPids to report).
	var there []string
	for _, dir := range m.Paths() {
		if _, err := os.Lstat(dir); !gone(err) {
			there = append(there, dir)
		}
	}
	if len(there) == 0 {
		return nil
	}
	if frozen, err := m.Frozen(); err == nil && frozen {
		return fmt.Errorf("container's cgroup unexpectedly frozen: %s", m.describe())
	}
	// Every hierarchy: on v1 Pids reads only one.
	var pids []int
	for _, dir := range there {
		p, err := cgroups.GetAllPids(dir)
		if err != nil && !gone(err) {
			return fmt.Errorf("list the processes of cgroup %s: %w", dir, err)
		}
		pids = append(pids, p...)
	}
	slices.Sort(pids)
	pids = slices.Compact(pids)
	if len(pids) > 0 {
		return fmt.Errorf("container's cgroup is not empty: %d process(es) found in %s (pids %v)", len(pids), m.describe(), pids)
	}
	return nil
}

// enableUnified turns on, from the unified root down to the container's
// parent, the unified controllers v1 lacks (hugetlb on many hybrid
// hosts), so their files appear in the container's directory: only when
// a limit needs one (Set), so a spec without one writes nothing there. A failure
// (an ancestor with processes in it) is reported when a limit needs one.
func (m *Manager) enableUnified() error {
	var add []string
	for c := range m.unified {
		if !m.hasV1(c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	dir := m.v2.Path("")
	root := unifiedRoot(dir)
	rel, err := filepath.Rel(root, filepath.Dir(dir))
	if err != nil {
		return err
	}
	cur := root
	for _, elem := range append([]string{"."}, strings.Split(rel, "/")...) {
		if elem == "." {
			elem = ""
		}
		cur = filepath.Join(cur, elem)
		for _, c := range add {
			// Best effort, one controller at a time.
			_ = cgroups.WriteFile(cur, "cgroup.subtree_control", c)
		}
	}
	return nil
}

// hasV1 reports whether controller c has a v1 hierarchy for the container.
func (m *Manager) hasV1(c string) bool {
	return m.v1 != nil && m.v1.Path(c) != ""
}

// describe names the container's cgroup for error messages.
func (m *Manager) describe() string {
	if m.v1 != nil {
		if p := m.v1.Path("devices"); p != "" {
			return p + " (and the other hierarchies)"
		}
	}
	if m.v2 != nil {
		return m.v2.Path("")
	}
	return "?"
}

// Exists reports whether any of the container's cgroup directories is
// still there.
func (m *Manager) Exists() bool {
	for _, p := range m.Paths() {
		if cgroups.PathExists(p) {
			return true
		}
	}
	return false
}

// Destroy removes every cgroup directory of the container, in every
// hierarchy. It fails while a process is still in one: see KillAll.
func (m *Manager) Destroy() error {
	if m.systemd != "" {
		// Stops the unit (systemd removes its cgroup) and resets it if it
		// failed (an OOM kill), so the id can be used again.
		if err := m.main().Destroy(); err != nil {
			return fmt.Errorf("remove systemd unit %s: %w", m.systemd, err)
		}
		return nil
	}
	paths := m.Paths()
	// RemovePaths deletes from the map it is given.
	if err := cgroups.RemovePaths(maps.Clone(paths)); err != nil {
		return fmt.Errorf("remove cgroups %s: %w", m.describe(), err)
	}
	return nil
}

const cgroupRoot = "/sys/fs/cgroup"
