package libcontainer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/notify"
	"github.com/husk-runtime/husk/libcontainer/proc"
	"github.com/husk-runtime/husk/libcontainer/rootless"
	"github.com/husk-runtime/husk/libcontainer/trace"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// CreateOpts is everything `husk create` and `husk run` pass to Create.
type CreateOpts struct {
	Root    string // --root
	ID      string
	Bundle  string // absolute
	Config  *configs.Config
	PidFile string // optional
	// Stdio of the container process (passed through; nil means /dev/null).
	Stdin, Stdout, Stderr *os.File
	// ExtraFiles become the process's fds 3, 4, … (--preserve-fds).
	ExtraFiles []*os.File
	// CNI says where network lists and plugins are, for a container whose
	// annotations ask for a CNI network.
	CNI cni.Options
	// Rootless is what changes for a caller without root.
	Rootless Rootless
	// Notify: the config binds the state dir's notify directory (package
	// notify), made here before the mounts.
	Notify bool
}

// Create builds the container up to the point where its init waits on
// exec.fifo for `start`. On any failure everything it made is undone.
func Create(o CreateOpts) (*Container, error) {
	network, err := checkNew(o.ID, o.Config)
	if err != nil {
		return nil, err
	}
	if o.Config, err = launch.WithCompiledSeccomp(o.Config); err != nil {
		return nil, fmt.Errorf("create container %s: %w", o.ID, err)
	}
	trace.Mark("config")
	if err := proc.SetSubreaper(); err != nil {
		return nil, err
	}
	c, err := newContainer(o.Root, o.ID, func() error { return fmt.Errorf("container %s %w", o.ID, ErrExist) })
	if err != nil {
		return nil, err
	}
	if err := c.create(o, network); err != nil {
		c.undoCreate()
		return nil, err
	}
	return c, nil
}

func (c *Container) create(o CreateOpts, network *cni.Request) error {
	fifo := filepath.Join(c.dir, fifoName)
	if err := unix.Mkfifo(fifo, 0o622); err != nil {
		return fmt.Errorf("mkfifo %s: %w", fifo, err)
	}
	// mkfifo honours the umask; init may run as any user and must be able
	// to open it for writing.
	if err := os.Chmod(fifo, 0o622); err != nil {
		return fmt.Errorf("chmod %s: %w", fifo, err)
	}
	if o.Notify {
		if err := notify.MakeDir(c.dir); err != nil {
			return err
		}
	}
	cfg, err := c.attachNetwork(o.Config, network, o.CNI)
	if err != nil {
		return err
	}
	c.State = newState(o.ID, o.Bundle, cfg)
	maps, err := o.Rootless.mapWriter(cfg)
	if err != nil {
		return err
	}
	if cfg, err = o.Rootless.withRootlessEUID(cfg); err != nil {
		return err
	}
	cfg = o.Rootless.withDelegatedCgroup(cfg, o.ID)
	c.State.Config = cfg
	cg, err := c.recordCgroups(cfg, o.Rootless)
	if err != nil {
		return err
	}
	plan, err := launch.NewPlan(cfg, launch.Options{})
	if err != nil {
		return err
	}
	if plan.Rootfs, err = launch.PlanRootfs(cfg); err != nil {
		return err
	}
	if plan.System, err = launch.PlanSystem(cfg); err != nil {
		return err
	}
	msg, err := launch.BootstrapMessage(cfg)
	if err != nil {
		return err
	}
	trace.Mark("prepare")
	place, err := placeCgroups(cg, cfg, o.Rootless)
	if err != nil {
		return err
	}
	defer place.close()
	trace.Mark("cgroups")
	pid, err := launch.Start(&launch.Request{
		Config: cfg,
		Msg:    msg,
		Plan:   plan,
		Listener: func() (*bootstrap.PlanListener, error) {
			// init is the process: the launcher puts its pid in both.
			return launch.Listener(cfg, cfg.SpecState(specs.StateCreating, launch.ProcessPid))
		},
		Maps: launch.MapperOf(maps),
		Steps: launch.CreateSteps{
			Config:   initConfig(cfg),
			Limits:   place.limits,
			Hooks:    c.runCreateRuntimeHooks,
			AskHooks: cfg.Hooks.RunInParent() || limitsPids(cfg),
		},
		Cgroups:   launch.CgroupsFor(place.entry, place.join),
		FifoPath:  fifo,
		Stdio:     [3]*os.File{o.Stdin, o.Stdout, o.Stderr},
		Preserved: o.ExtraFiles,
	})
	if pid > 0 {
		// Recorded even on failure, so undoCreate can kill it.
		c.State.InitPid = pid
		_, c.State.InitStart, _ = proc.Stat(pid)
	}
	if err != nil {
		return fmt.Errorf("create container %s: %w", o.ID, err)
	}
	if err := moveNetDevices(cfg, pid); err != nil {
		return err
	}
	if err := saveState(c.dir, c.State); err != nil {
		return err
	}
	if o.PidFile != "" {
		if err := WritePidFile(o.PidFile, pid); err != nil {
			return err
		}
	}
	trace.Mark("created")
	logrus.Debugf("container %s created, init pid %d", o.ID, pid)
	return nil
}

// checkNew checks the id and the config of a container being made
// (created or restored), and returns the CNI network it asks for.
func checkNew(id string, cfg *configs.Config) (*cni.Request, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := configs.Validate(cfg); err != nil {
		return nil, ConfigError(err)
	}
	network, err := cni.ForConfig(cfg)
	if err != nil {
		return nil, ConfigError(err)
	}
	return network, nil
}

// newContainer makes the state directory ROOT/ID of a container being
// created (or restored) and locks it; exists is the error when the id is
// taken.
func newContainer(root, id string, exists func() error) (*Container, error) {
	if err := os.MkdirAll(root, 0o711); err != nil {
		return nil, fmt.Errorf("create root %s: %w", root, err)
	}
	dir := filepath.Join(root, id)
	if err := os.Mkdir(dir, 0o711); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, exists()
		}
		return nil, fmt.Errorf("create state dir %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Container{ID: id, dir: dir, lock: lock}, nil
}

// recordCgroups makes the cgroup manager of a container being made (nil:
// a rootless container without cgroups) and saves the state with their
// paths, before anything joins them: if husk dies midway, delete --force
// finds them there.
func (c *Container) recordCgroups(cfg *configs.Config, r Rootless) (*cgroup.Manager, error) {
	cg, err := r.cgroups(cfg, c.ID)
	if err != nil {
		return nil, err
	}
	if cg != nil {
		c.State.CgroupPaths = cg.Paths()
	}
	return cg, saveState(c.dir, c.State)
}

// newState is the state of a container being made from cfg.
func newState(id, bundle string, cfg *configs.Config) *State {
	return &State{
		OCIVersion:  cfg.OCIVersion,
		ID:          id,
		Bundle:      bundle,
		Rootfs:      cfg.Rootfs,
		Created:     time.Now().UTC(),
		Owner:       ownerName(),
		Annotations: cfg.Annotations,
		Config:      cfg,
	}
}

// initConfig is cfg as husk init gets it: without the cgroup settings,
// which only the parent applies (init is placed in the cgroups from
// outside), so that init neither receives nor decodes them (see
// configs/lazyjson.go: the cgroup limits are a third of the config's types).
func initConfig(cfg *configs.Config) *configs.Config {
	if cfg.Cgroup == nil {
		return cfg
	}
	c := *cfg
	c.Cgroup = nil
	return &c
}

// limitsPids reports whether cfg sets a pids limit: it counts what pid 1
// forks (the createContainer hooks), so it is applied once the rootfs is
// mounted, at CREATE_HOOKS (bootstrap.RootfsAskHooks), as runc's procHooks.
func limitsPids(cfg *configs.Config) bool {
	if cfg.Cgroup == nil {
		return false
	}
	r := &cfg.Cgroup.Resources
	_, unified := r.Unified["pids.max"]
	return r.PidsLimit != nil || unified
}

// undoCreate kills a half-made container's init and removes its state.
func (c *Container) undoCreate() {
	c.returnNetDevices()
	if c.State != nil && c.State.InitPid > 0 {
		proc.KillAndReap(c.State.InitPid)
	}
	c.runPoststop()
	if err := c.detachNetwork(true); err != nil {
		logrus.Warnf("undo create: %v", err)
	}
	if err := c.destroyCgroups(); err != nil {
		// Keep the state: it is how delete --force finds the cgroups.
		logrus.Warnf("undo create: %v (retry with delete --force %s)", err, c.ID)
		c.Close()
		return
	}
	removeStateDir(c.dir)
	c.Close()
}

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
