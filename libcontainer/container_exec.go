package libcontainer

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/caps"
	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/proc"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
)

// ExecOpts is what `husk exec` passes to Exec.
type ExecOpts struct {
	Process *configs.Process
	// AddCaps (--cap) are capabilities the process gets on top of its own
	// in the bounding, effective and permitted sets (and ambient when it
	// has inheritable ones), as runc gives them, also beyond the
	// container's bounding set.
	AddCaps      []string
	IgnorePaused bool   // exec into a paused container (the process waits, frozen)
	PidFile      string // optional
	// Stdio of the process (passed through; nil means /dev/null).
	Stdin, Stdout, Stderr *os.File
	// ExtraFiles become the process's fds 3, 4, … (--preserve-fds).
	ExtraFiles []*os.File
	// SubCgroups puts the process in sub-cgroups (exec --cgroup), from
	// ParseSubCgroups; nil: the container's own cgroups.
	SubCgroups map[string]string
}

// Exec starts o.Process in the container: `husk init` joins every
// namespace of the container's init through nsexec, like a create joins
// namespaces given by path, and its cgroups; the launcher sets the
// process up there, still invisible to the container, then forks it. It
// returns the process's pid once it runs. The caller (husk is its
// subreaper) reaps it.
func (c *Container) Exec(o ExecOpts) (int, error) {
	op := OpExec
	if o.IgnorePaused {
		op = OpExecIgnorePaused
	}
	if _, err := c.check(op); err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", c.ID, err)
	}
	cfg, err := c.execConfig(o.Process, o.AddCaps)
	if err != nil {
		return 0, err
	}
	pid, err := c.launchIn(cfg, launch.Options{Exec: true}, &o)
	if err == nil && o.PidFile != "" {
		if err = WritePidFile(o.PidFile, pid); err != nil {
			proc.KillAndReap(pid)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", c.ID, err)
	}
	return pid, nil
}

// launchIn starts cfg's process in the container (an exec, or a
// startContainer hook) and returns its pid once its execve succeeded.
// The process is in the container's cgroups from its first instruction:
// the launcher enters them itself (born in the v2 directory, "0" written
// to the v1 tasks files) or is moved in before nsexec runs, never runs a
// Go runtime there, and a fork refused by pids.max is one line saying so.
func (c *Container) launchIn(cfg *configs.Config, lo launch.Options, o *ExecOpts) (int, error) {
	plan, err := launch.NewPlan(cfg, lo)
	if err != nil {
		return 0, err
	}
	msg, err := execMessage(cfg, c.State.InitPid)
	if err != nil {
		return 0, err
	}
	if err := proc.SetSubreaper(); err != nil {
		return 0, err
	}
	join := c.rootlessJoin(c.JoinCgroups)
	var entry *cgroup.Entry
	if o.SubCgroups != nil {
		join = func(pid int) error { return c.joinSubCgroups(pid, o.SubCgroups) }
	} else if entry, err = c.execCgroups(); err != nil {
		return 0, err
	}
	defer entry.Close()
	pid, err := launch.Start(&launch.Request{
		Config: cfg,
		Msg:    msg,
		Plan:   plan,
		Listener: func() (*bootstrap.PlanListener, error) {
			if s := cfg.Seccomp; s == nil || !s.UsesNotify() {
				return nil, nil
			}
			status := specs.ContainerState(c.Status().String())
			return launch.Listener(cfg, cfg.SpecState(status, c.State.InitPid))
		},
		Steps:     launch.ExecSteps{Config: cfg},
		Cgroups:   launch.CgroupsFor(entry, join),
		Stdio:     [3]*os.File{o.Stdin, o.Stdout, o.Stderr},
		Preserved: o.ExtraFiles,
	})
	if err != nil && pid > 0 {
		proc.KillAndReap(pid)
	}
	return pid, err
}

// execConfig is the container's config with p as its process. Everything
// else in it (seccomp, the namespaces to join) is the container's: an
// exec'd process never holds more than the container's init.
func (c *Container) execConfig(p *configs.Process, addCaps []string) (*configs.Config, error) {
	if c.State.Config == nil {
		return nil, errors.New("the container's state has no config")
	}
	cfg := *c.State.Config
	if err := addCapabilities(p, addCaps); err != nil {
		return nil, err
	}
	if err := boundByInit(cfg.Process, p, addCaps); err != nil {
		return nil, err
	}
	cfg.Process = p
	cfg.Hooks = nil
	// A state from before husk kept the compiled filter has none yet.
	return launch.WithCompiledSeccomp(&cfg)
}

// addCapabilities gives p each of names (--cap) in its bounding,
// effective and permitted sets, and ambient when it has inheritable ones,
// as runc does. A name husk does not know is ignored with runc's warning.
// A process without capabilities in its config keeps them all.
func addCapabilities(p *configs.Process, names []string) error {
	c := p.Capabilities
	var unknown []string
	for _, name := range names {
		if _, ok := caps.Value(name); !ok {
			unknown = append(unknown, name)
			continue
		}
		if c == nil {
			continue
		}
		c.Bounding = appendNew(c.Bounding, name)
		c.Effective = appendNew(c.Effective, name)
		c.Permitted = appendNew(c.Permitted, name)
		if len(c.Inheritable) > 0 {
			c.Ambient = appendNew(c.Ambient, name)
		}
	}
	if len(unknown) > 0 {
		logrus.Warnf("--cap: ignoring unknown or unavailable capabilities: [%s]", strings.Join(unknown, " "))
	}
	return nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// boundByInit gives p init's capabilities when it names none, and keeps
// init's no_new_privs. Capabilities asked beyond init's bounding set
// (--cap, or a --process's own) are granted, as runc does (`docker exec
// --privileged` sends a full set): the caller is root on the host and
// asked for them explicitly.
func boundByInit(init, p *configs.Process, added []string) error {
	if init.NoNewPrivileges {
		p.NoNewPrivileges = true
	}
	if p.Capabilities == nil {
		p.Capabilities = init.Capabilities
		return nil
	}
	if init.Capabilities == nil {
		return nil
	}
	for _, name := range p.Capabilities.Bounding {
		if !slices.Contains(init.Capabilities.Bounding, name) {
			logrus.Debugf("exec: %s is outside the container's bounding set; granted, as asked", name)
		}
	}
	return nil
}

// execMessage makes nsexec join every namespace of the container's init
// (pid), user first, and unshare none.
func execMessage(cfg *configs.Config, pid int) (*bootstrap.Message, error) {
	m := &bootstrap.Message{}
	for _, t := range configs.NamespaceTypes() {
		if _, ok := cfg.Namespace(t); ok {
			m.NsPaths = append(m.NsPaths, fmt.Sprintf("%s:/proc/%d/ns/%s", t.ProcName(), pid, t.ProcName()))
		}
	}
	if p := cfg.Process; p.OomScoreAdj != nil {
		m.OomScoreAdj = fmt.Sprint(*p.OomScoreAdj)
	}
	var err error
	m.Affinity, err = launch.InitialAffinity(cfg.Process)
	return m, err
}

// ParseSubCgroups reads exec's --cgroup values as runc does: "SUB" puts
// the process in sub-cgroup SUB of every one of the container's cgroups;
// "CTRL[,CTRL]:SUB" in SUB of those cgroup v1 controllers only (the
// others keep the container's own). The result maps a controller ("" for
// all) to SUB, a path below the container's cgroup.
func ParseSubCgroups(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	subs := map[string]string{}
	for _, v := range values {
		ctrls, sub, ok := strings.Cut(v, ":")
		if !ok {
			ctrls, sub = "", v
		}
		sub, ok = subPath(sub)
		if !ok {
			return nil, fmt.Errorf("--cgroup %q: bad sub cgroup path: it leads out of the container's cgroup (want SUB or CONTROLLER:SUB below it)", v)
		}
		for _, c := range strings.Split(ctrls, ",") {
			if _, dup := subs[c]; dup {
				return nil, fmt.Errorf("--cgroup %q: %q given twice", v, c)
			}
			subs[c] = sub
		}
	}
	return subs, nil
}

// subPath is sub as runc takes it, joined to the container's cgroup
// (path.Join(base, sub)) and made relative to it again: "" for the
// cgroup itself; ok is false when it leads out of it.
func subPath(sub string) (string, bool) {
	const base = "/cgroup"
	p := path.Join(base, sub)
	if p == base {
		return "", true
	}
	return strings.CutPrefix(p, base+"/")
}

// joinSubCgroups moves pid into the container's cgroups, then into the
// sub-cgroups subs names (ParseSubCgroups), which must exist, as in runc.
func (c *Container) joinSubCgroups(pid int, subs map[string]string) error {
	if err := c.JoinCgroups(pid); err != nil {
		return err
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	paths := m.Paths()
	for ctrl := range subs {
		if _, ok := paths[ctrl]; ctrl != "" && !ok {
			return fmt.Errorf("--cgroup %s:%s: the container has no %q cgroup", ctrl, subs[ctrl], ctrl)
		}
	}
	for ctrl, dir := range paths {
		sub, ok := subs[ctrl]
		if !ok {
			if sub, ok = subs[""]; !ok {
				continue
			}
		}
		procs := filepath.Join(dir, sub, "cgroup.procs")
		if err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("--cgroup %s: move pid %d into %s: %w", sub, pid, filepath.Join(dir, sub), err)
		}
	}
	return nil
}
