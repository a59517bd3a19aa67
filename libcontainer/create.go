package libcontainer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/notify"
	"github.com/husk-runtime/husk/libcontainer/proc"
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

// limitsPids reports whether cfg sets a pids limit: it counts the threads
// of init's Go runtime, so it is applied once they are made, at
// CREATE_HOOKS (bootstrap.ConfigAskHooks).
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

// ownerName is the user name of the caller, as `list` shows it: from
// /etc/passwd, as runc reads it, else from the C library's user database
// (NSS: LDAP, sssd...), which costs a cgo call and nsswitch.conf.
func ownerName() string {
	uid := strconv.Itoa(os.Getuid())
	if name, ok := passwdName("/etc/passwd", uid); ok {
		return name
	}
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "#" + uid
}

// passwdName finds uid's name in a passwd file (name:x:uid:...).
func passwdName(path, uid string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 4)
		if len(f) == 4 && f[2] == uid && f[0] != "" && !strings.HasPrefix(f[0], "+") && !strings.HasPrefix(f[0], "-") {
			return f[0], true
		}
	}
	return "", false
}
