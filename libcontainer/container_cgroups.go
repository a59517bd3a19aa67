package libcontainer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// The container's cgroups: made and joined by create (before nsexec
// reads its bootstrap message, so every process of the container and its
// cgroup namespace start inside them), recorded in State.CgroupPaths,
// used by pause, resume, update, events, ps and kill --all, and removed,
// with whatever still runs in them, by delete.

// killTimeout bounds how long delete waits for the processes of a
// container's cgroups to die after SIGKILL.
const killTimeout = 10 * time.Second

// newCgroups makes the cgroup manager of a container being created.
func newCgroups(cfg *configs.Config, id string) (*cgroup.Manager, error) {
	m, err := cgroup.New(cfg.CgroupConfig(), id)
	if err != nil {
		return nil, ConfigError(err)
	}
	return m, nil
}

// cgroupPlacement is how create puts init into the container's cgroups
// and when it limits them. A zero one (m nil: a rootless container
// without cgroups) places nothing.
type cgroupPlacement struct {
	m *cgroup.Manager
	// entry is how init enters the cgroups without being moved by pid
	// (cgroup.Entry); nil where it is moved in (join): the systemd
	// driver.
	entry *cgroup.Entry
	// limits applies linux.resources: the create driver calls it once,
	// after nsexec's forks and before the runtime hooks or READY, as runc
	// does (a pids limit of 1 would refuse nsexec's own fork; a memory
	// limit does not count building the rootfs).
	limits func() error
}

// placeCgroups prepares the cgroups of a container being created: it
// makes them, without limits, and opens them for init to enter (the
// cgroupfs driver; systemd makes its scope with init in it, at join).
// For a caller without root in cgroups of its own, the device rules are
// left out, as runc does: writing them needs CAP_SYS_ADMIN on the host,
// and such a container reaches only host nodes bound into it.
func placeCgroups(m *cgroup.Manager, cfg *configs.Config, r Rootless) (*cgroupPlacement, error) {
	if m == nil {
		return &cgroupPlacement{limits: func() error { return nil }}, nil
	}
	unprivileged := r.Cgroups && r.Caller.Unprivileged()
	apply := m.Set
	if unprivileged {
		apply = m.SetLimits
	}
	p := &cgroupPlacement{m: m, limits: func() error {
		if err := apply(&cfg.CgroupConfig().Resources); err != nil {
			return ConfigError(err)
		}
		return nil
	}}
	if m.Systemd() || (unprivileged && m.Layout() != cgroup.V2) {
		// v1 cgroups of a caller without root may be made only in part
		// (Apply skips what it cannot make): moved in by pid, as before.
		return p, nil
	}
	if err := m.Create(); err != nil {
		return nil, err
	}
	var err error
	p.entry, err = m.Entry()
	return p, err
}

// join moves init (pid) into the cgroups, when it did not enter them
// itself: the step startInit takes before sending nsexec its bootstrap
// message.
func (p *cgroupPlacement) join(pid int) error {
	if p.m == nil {
		return nil
	}
	return p.m.Apply(pid)
}

func (p *cgroupPlacement) close() {
	p.entry.Close()
}

// cgroups is the manager of the container's recorded cgroups.
func (c *Container) cgroups() (*cgroup.Manager, error) {
	if len(c.State.CgroupPaths) == 0 {
		return nil, c.noCgroups()
	}
	var cg *configs.Cgroup
	if c.State.Config != nil {
		cg = c.State.Config.CgroupConfig()
	}
	return cgroup.Open(c.State.CgroupPaths, cg, c.ID)
}

// frozen reports whether the container's cgroups are frozen.
func (c *Container) frozen() bool {
	m, err := c.cgroups()
	if err != nil {
		return false
	}
	f, err := m.Frozen()
	return err == nil && f
}

// Pause freezes every process of a created or running container.
func (c *Container) Pause() error {
	if _, err := c.check(OpPause); err != nil {
		return err
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	return m.Freeze()
}

// Resume thaws a paused container.
func (c *Container) Resume() error {
	if _, err := c.check(OpResume); err != nil {
		return err
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	return m.Thaw()
}

// Resources are the container's current cgroup limits, for update to
// change some of.
func (c *Container) Resources() configs.Resources {
	if c.State.Config == nil {
		return configs.Resources{}
	}
	return c.State.Config.CgroupConfig().Resources
}

// Update applies new limits to a live container and records them. The
// device rules stay as they are.
func (c *Container) Update(r configs.Resources) error {
	if _, err := c.check(OpUpdate); err != nil {
		return err
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	prev := c.Resources()
	if err := m.Update(&prev, &r); err != nil {
		return err
	}
	if c.State.Config != nil {
		cg := *c.State.Config.CgroupConfig()
		cg.Resources = r
		c.State.Config.Cgroup = &cg
	}
	return saveState(c.dir, c.State)
}

// Stats are the container's cgroup statistics (runc's events shape).
func (c *Container) Stats() (*cgroup.Stats, error) {
	m, err := c.cgroups()
	if err != nil {
		return nil, err
	}
	return m.Stats()
}

// Pids lists every process in the container's cgroups.
func (c *Container) Pids() ([]int, error) {
	m, err := c.cgroups()
	if err != nil {
		return nil, err
	}
	return m.Pids()
}

// SignalAll sends sig to every process in the container's cgroups (kill
// --all). A stopped container whose cgroups are gone has none: no error.
func (c *Container) SignalAll(sig unix.Signal) error {
	if len(c.State.CgroupPaths) == 0 {
		return c.signalInitOnly(sig)
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	if c.Status() == Stopped && !m.Exists() {
		return nil
	}
	if err := m.Signal(sig); err != nil {
		return err
	}
	if sig == unix.SIGKILL {
		// A frozen process dies only once thawed.
		if frozen, _ := m.Frozen(); frozen {
			return m.Thaw()
		}
	}
	return nil
}

// NotifyOOM reports each time the container runs out of memory, until
// stop is closed or its cgroups are removed.
func (c *Container) NotifyOOM(stop <-chan struct{}) (<-chan struct{}, error) {
	m, err := c.cgroups()
	if err != nil {
		return nil, err
	}
	return m.NotifyOOM(stop)
}

// execCgroups is how an exec'd process enters the container's cgroups
// itself (cgroup.Entry): nil where JoinCgroups moves it (the systemd
// driver, a rootless container). A pids limit needs no check here: see
// Exec.
func (c *Container) execCgroups() (*cgroup.Entry, error) {
	if len(c.State.CgroupPaths) == 0 {
		return nil, nil // a rootless container without cgroups
	}
	m, err := c.cgroups()
	if err != nil {
		return nil, err
	}
	rootless := c.State.Config == nil || c.State.Config.RootlessEUID
	if rootless && m.Layout() != cgroup.V2 {
		return nil, nil
	}
	return m.Entry()
}

// JoinCgroups moves pid (a process exec'd into the container) into the
// container's cgroups.
func (c *Container) JoinCgroups(pid int) error {
	if len(c.State.CgroupPaths) == 0 {
		return nil // a rootless container without cgroups
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	return m.AddPid(pid)
}

// thaw lets a frozen container's processes run (and die of SIGKILL).
func (c *Container) thaw() {
	m, err := c.cgroups()
	if err != nil {
		return
	}
	if frozen, _ := m.Frozen(); frozen {
		if err := m.Thaw(); err != nil {
			logrus.Warnf("container %s: %v", c.ID, err)
		}
	}
}

// destroyCgroups kills whatever still runs in the container's cgroups
// (exec'd processes, their children, a half-made init) and removes every
// cgroup directory the container had.
func (c *Container) destroyCgroups() error {
	if c.State == nil || len(c.State.CgroupPaths) == 0 {
		return nil
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	if err := m.KillAndDestroy(killTimeout); err != nil {
		return fmt.Errorf("container %s: %w", c.ID, err)
	}
	c.removeDelegatedParent()
	return nil
}

// signalInitOnly is kill --all for a container without cgroups (rootless
// where none were writable): there is no list of its processes, so only
// init is signalled; with its own pid namespace, SIGKILL of init takes
// every process of the container with it.
func (c *Container) signalInitOnly(sig unix.Signal) error {
	if c.Status() == Stopped {
		return nil
	}
	logrus.Debugf("container %s has no cgroups: kill --all signals only its init", c.ID)
	return c.Signal(sig)
}

// noCgroups is the error of ps, pause, resume, update and events for a
// container that has no cgroups, saying why: a rootless container made
// where its user could write no cgroup has none to list, freeze or limit.
func (c *Container) noCgroups() error {
	if c.State.Config == nil || !c.State.Config.RootlessEUID {
		return fmt.Errorf("container %s has no cgroups recorded", c.ID)
	}
	owner := c.State.Owner
	if owner == "" {
		owner = "its user"
	}
	return fmt.Errorf("container %s has no cgroups: it was created rootless (by %s, without root) where no cgroup was writable, "+
		"so its processes cannot be listed, frozen or limited; give the user a delegated cgroup v2 subtree (systemd Delegate=yes) or cgroups it owns", c.ID, owner)
}

// removeDelegatedParent removes DELEGATION/husk, the parent
// withDelegatedCgroup put a rootless container's cgroup in, once the last
// container in it is gone (while others remain, rmdir fails and nothing
// happens): delete leaves nothing in the user's delegated subtree.
func (c *Container) removeDelegatedParent() {
	if c.State.Config == nil || !c.State.Config.RootlessEUID {
		return
	}
	for _, p := range c.State.CgroupPaths {
		dir := filepath.Dir(p)
		if filepath.Base(p) == c.ID && filepath.Base(dir) == "husk" {
			os.Remove(dir)
		}
	}
}

// rootlessJoin is join (moving an exec'd process into the container's
// cgroups) for a container made rootless: where the kernel refuses the
// move, the process stays in its caller's cgroup with a warning, as runc
// does. On cgroup v2 a user may move a process between two cgroups only
// when it may write cgroup.procs of their common ancestor: a husk exec
// run from outside the user's delegated subtree (a login shell's
// session scope) cannot move it in.
func (c *Container) rootlessJoin(join func(int) error) func(int) error {
	if c.State.Config == nil || !c.State.Config.RootlessEUID {
		return join
	}
	return func(pid int) error {
		err := join(pid)
		if errors.Is(err, os.ErrPermission) {
			logrus.Warnf("exec: process %d stays in the caller's cgroup, outside container %s's: %v "+
				"(a user may move processes only within its delegated cgroup subtree: run husk exec from inside it)", pid, c.ID, err)
			return nil
		}
		return err
	}
}
