package cgroup

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/cgroups/systemd"
)

// The systemd driver (--systemd-cgroup): the container's cgroup is a
// transient scope, Parent/ScopePrefix-Name.scope, made over D-Bus with
// Delegate=yes by the library's systemd manager. It sets each resource as
// a unit property where systemd has one and writes the cgroup files for
// the rest, as runc does; device rules become DeviceAllow= properties and
// the eBPF program.

// dbusTimeout bounds every call that talks to systemd: a dbus or systemd
// that stopped answering makes husk fail, not hang. As root the library
// talks to systemd through the system bus (dbus-daemon), and through
// systemd's private socket only when the bus cannot be reached.
const dbusTimeout = 45 * time.Second

// dbusTimeoutEnv overrides dbusTimeout (a Go duration such as "5s"); the
// tests use it to see a hung D-Bus without waiting 45 s.
const dbusTimeoutEnv = "HUSK_DBUS_TIMEOUT"

// callTimeout is dbusTimeout or the value of HUSK_DBUS_TIMEOUT.
func callTimeout() (time.Duration, error) {
	v, ok := os.LookupEnv(dbusTimeoutEnv)
	if !ok || v == "" {
		return dbusTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q: want a positive duration such as 45s", dbusTimeoutEnv, v)
	}
	return d, nil
}

// newSystemd is the manager of a container's systemd scope; paths are
// the ones recorded at create, nil to compute them.
func newSystemd(cg *configs.Cgroup, id string, paths map[string]string) (*Manager, error) {
	if !systemd.IsRunningSystemd() {
		return nil, noSystemd()
	}
	name := cg.Name
	if name == "" {
		name = id
	}
	timeout, err := callTimeout()
	if err != nil {
		return nil, err
	}
	props, err := configs.SystemdProperties(cg.SystemdProps)
	if err != nil {
		return nil, err
	}
	lc := &cgroups.Cgroup{
		Systemd:      true,
		Rootless:     cg.UserSystemd,
		Parent:       cg.Parent,
		ScopePrefix:  cg.ScopePrefix,
		Name:         name,
		Resources:    &cgroups.Resources{},
		SystemdProps: props,
	}
	m := &Manager{layout: HostLayout(), systemd: unitName(lc)}
	if dbusStuck.Load() && m.layout == V2 {
		// The library would wait for ever on its stuck connection.
		stuck, err := newStuck(lc, m.systemd, paths[""], timeout)
		if err != nil {
			return nil, err
		}
		m.v2, m.unified = stuck, readControllers(fs2Root)
		return m, nil
	}
	mgr, err := manager.NewWithPaths(lc, paths)
	if err != nil {
		return nil, fmt.Errorf("systemd unit %s: %w", unitName(lc), err)
	}
	timed := timedManager{mgr, m.systemd, timeout}
	if m.layout == V2 {
		m.v2 = timed
		m.unified = readControllers(fs2Root)
	} else {
		// v1 and hybrid: the library's legacy systemd manager joins
		// every hierarchy itself.
		m.layout = V1
		m.v1 = timed
	}
	return m, nil
}

const fs2Root = "/sys/fs/cgroup"

// unitName is the scope's name, as the library makes it.
func unitName(c *cgroups.Cgroup) string {
	if strings.HasSuffix(c.Name, ".slice") {
		return c.Name
	}
	return c.ScopePrefix + "-" + c.Name + ".scope"
}

// noSystemd says why --systemd-cgroup cannot work here.
func noSystemd() error {
	comm, err := os.ReadFile("/proc/1/comm")
	pid1 := strings.TrimSpace(string(comm))
	if err != nil {
		pid1 = "unknown"
	}
	return fmt.Errorf("--systemd-cgroup: systemd is not running on this host (no /run/systemd/system; PID 1 is %q): drop the flag to let husk manage the cgroups itself (cgroupfs)", pid1)
}

// timedManager is a library manager whose D-Bus calls are bounded by
// dbusTimeout. The library reconnects after a restarted dbus or systemd;
// this covers one that does not answer at all.
type timedManager struct {
	cgroups.Manager
	unit    string
	timeout time.Duration
}

func (t timedManager) timed(what string, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(t.timeout):
		dbusStuck.Store(true)
		return fmt.Errorf("systemd unit %s: %s: no answer from systemd over D-Bus in %s", t.unit, what, t.timeout)
	}
}

func (t timedManager) Apply(pid int) error {
	return t.timed("start", func() error { return t.Manager.Apply(pid) })
}

func (t timedManager) Set(r *cgroups.Resources) error {
	return t.timed("set properties", func() error { return t.Manager.Set(r) })
}

func (t timedManager) Freeze(state cgroups.FreezerState) error {
	return t.timed("freeze", func() error { return t.Manager.Freeze(state) })
}

func (t timedManager) Destroy() error {
	return t.timed("stop", func() error { return t.Manager.Destroy() })
}
