package libcontainer

import (
	"fmt"
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
		return nil, fmt.Errorf("config.json: %w", err)
	}
	return m, nil
}

// joinCgroups creates the cgroups, moves pid into them and applies the
// limits: the step startInit takes between starting `husk init` and
// sending it the bootstrap message.
func joinCgroups(m *cgroup.Manager, cfg *configs.Config, pid int) error {
	if err := m.Apply(pid); err != nil {
		return err
	}
	if err := m.Set(&cfg.CgroupConfig().Resources); err != nil {
		return fmt.Errorf("config.json: %w", err)
	}
	return nil
}

// cgroups is the manager of the container's recorded cgroups.
func (c *Container) cgroups() (*cgroup.Manager, error) {
	if len(c.State.CgroupPaths) == 0 {
		return nil, fmt.Errorf("container %s has no cgroups recorded", c.ID)
	}
	return cgroup.Open(c.State.CgroupPaths)
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
	if err := m.Update(&r); err != nil {
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

// JoinCgroups moves pid (a process exec'd into the container) into the
// container's cgroups.
func (c *Container) JoinCgroups(pid int) error {
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
	if err := m.KillAll(killTimeout); err != nil {
		return fmt.Errorf("container %s: %w", c.ID, err)
	}
	return m.Destroy()
}
