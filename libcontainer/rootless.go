package libcontainer

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootless"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Rootless is what Create does differently for a caller without root on
// the host (see package rootless); the zero value is a caller with root.
type Rootless struct {
	Caller rootless.Caller
	// Cgroups: --rootless (or auto for such a caller): cgroups are made
	// only where the caller may write, in its delegated v2 subtree when
	// it has one, and skipped when there is none and nothing needs them.
	Cgroups bool
	// LimitField is the first limit of linux.resources ("" for none),
	// CgroupsPath linux.cgroupsPath as given: both need a cgroup.
	LimitField, CgroupsPath string
}

// mapWriter is how the parent writes the maps of the container's new user
// namespace: a caller with root writes any map; a user writes a map of its
// own id itself (after setgroups "deny"), and anything more through
// newuidmap/newgidmap, checked first against its /etc/subuid and
// /etc/subgid ranges so that the error names the field.
func (r Rootless) mapWriter(cfg *configs.Config) (*rootless.MapWriter, error) {
	w := &rootless.MapWriter{UID: cfg.UIDMappings, GID: cfg.GIDMappings}
	if r.Caller.EUID == 0 || !cfg.NewNamespace(configs.NEWUSER) {
		return w, nil
	}
	name := strconv.Itoa(r.Caller.EUID)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	var helper [2]bool
	for i, f := range []struct {
		field, file string
		own         int
		maps        []configs.IDMap
	}{
		{"linux.uidMappings", "/etc/subuid", r.Caller.EUID, cfg.UIDMappings},
		{"linux.gidMappings", "/etc/subgid", r.Caller.EGID, cfg.GIDMappings},
	} {
		ranges, err := rootless.SubIDs(f.file, name, f.own)
		if err != nil {
			return nil, err
		}
		helper[i], err = rootless.CheckMappings(f.field, f.maps, rootless.IDSource{Own: uint32(f.own), File: f.file, Ranges: ranges})
		if err != nil {
			return nil, ConfigError(err)
		}
	}
	w.Helper = helper[0] || helper[1]
	w.DenySetgroups = !w.Helper
	return w, nil
}

// withRootlessEUID is cfg marked as made by a runtime without root, when
// it is: init then opens mount sources itself. Idmapped mounts need the
// runtime to own a user namespace for the mapping and to enter init's
// mount namespace, so they are refused there.
func (r Rootless) withRootlessEUID(cfg *configs.Config) (*configs.Config, error) {
	if !r.Caller.Unprivileged() {
		return cfg, nil
	}
	for i, m := range cfg.Mounts {
		if m.IDMap != nil {
			return nil, ConfigError(fmt.Errorf("mounts[%d] (%s): idmapped mounts need husk to run as root (rootless)", i, m.Destination))
		}
	}
	out := *cfg
	out.RootlessEUID = true
	return &out, nil
}

// withDelegatedCgroup is cfg with its cgroups placed where a rootless
// caller may have them: with --systemd-cgroup, a scope of its own systemd
// (user@UID.service, in user.slice unless cgroupsPath names a slice), as
// runc does; else, on a v2 host and with no cgroupsPath, in the caller's
// delegated subtree (DELEGATION/husk/ID). Otherwise cfg itself.
func (r Rootless) withDelegatedCgroup(cfg *configs.Config, id string) *configs.Config {
	if !r.Cgroups || !r.Caller.Unprivileged() {
		return cfg
	}
	cg := *cfg.CgroupConfig()
	switch {
	case cg.Systemd:
		cg.UserSystemd = true
		if r.CgroupsPath == "" || r.CgroupsPath[0] == ':' {
			cg.Parent = "user.slice"
		}
	case r.CgroupsPath != "" || cgroup.HostLayout() != cgroup.V2:
		return cfg
	default:
		top := delegatedSubtree()
		if top == "" {
			return cfg
		}
		logrus.Debugf("rootless: cgroups in the delegated subtree %s", top)
		cg.Path = path.Join(top, "husk", id)
	}
	out := *cfg
	out.Cgroup = &cg
	return &out
}

// cgroups makes the manager of the container's cgroups, or nil when a
// rootless container runs without: there is nowhere it may write, and
// it asked for no limit and no cgroupsPath.
func (r Rootless) cgroups(cfg *configs.Config, id string) (*cgroup.Manager, error) {
	m, err := newCgroups(cfg, id)
	if err != nil || !r.Cgroups {
		return m, err
	}
	var dirs []string
	for _, d := range m.Paths() {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	plan, note, err := rootless.PlanCgroups(dirs, rootless.Writable, r.LimitField, r.CgroupsPath)
	if err != nil {
		return nil, ConfigError(err)
	}
	if plan == rootless.SkipCgroups {
		logrus.Debug(note)
		return nil, nil
	}
	return m, nil
}

// delegatedSubtree is the top of the cgroup v2 subtree delegated to the
// caller (systemd's user@UID.service), "" when there is none.
func delegatedSubtree() string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	own, err := rootless.OwnCgroupV2(f)
	if err != nil {
		return ""
	}
	return rootless.Delegation("/sys/fs/cgroup", own, func(p string) bool { return unix.Access(p, unix.W_OK) == nil })
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
