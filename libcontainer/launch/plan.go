// Package launch is the parent's side of a launch. It turns a
// configs.Process into the plan the launcher (nsenter/launch.c) sets up
// and execs: for a container's init, for every exec and for a
// startContainer hook alike. Every value is checked here, in the parent,
// with an error that names the field; the plan it makes always fits the
// PLAN frame (limits.go). Then it starts `husk init` from a read-only
// view of the binary (spawn.go, binaryview.go) and walks it through
// package bootstrap's protocol (handshake.go) with two small drivers
// (drivers.go): what follows nsexec's PID for a create or an exec, and
// how init gets into the container's cgroups.
package launch

import (
	"fmt"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/caps"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Options is what a plan needs beyond the config.
type Options struct {
	// Exec: the launcher runs outside the container's pid namespace and
	// forks the process.
	Exec bool
	// Path is the file to exec, without a PATH lookup (a hook's path);
	// empty: the process's Args[0], looked up in its PATH.
	Path string
	// ExactEnv: the environment is exactly the process's (a hook's own
	// env), without a HOME added.
	ExactEnv bool
}

// NewPlan is cfg's process as a plan (without the listener's message:
// see Listener).
func NewPlan(cfg *configs.Config, o Options) (*bootstrap.Plan, error) {
	p := cfg.Process
	if p == nil || len(p.Args) == 0 {
		return nil, fmt.Errorf("process.args: must not be empty")
	}
	if err := checkProcess(p, o.Path); err != nil {
		return nil, err
	}
	plan := &bootstrap.Plan{
		Args: p.Args, Cwd: p.Cwd, Path: o.Path, UID: p.User.UID, GID: p.User.GID,
		Groups: p.User.AdditionalGids, Umask: 0o022, NoNewPrivs: p.NoNewPrivileges,
		Keyring: !cfg.NoNewKeyring, AppArmor: p.AppArmorProfile, SELinux: p.SelinuxLabel,
	}
	if p.User.Umask != nil {
		plan.Umask = *p.User.Umask
	}
	plan.Env, plan.FillHome = planEnv(p.Env)
	if o.ExactEnv {
		plan.Env, plan.FillHome = p.Env, false
	}
	var err error
	if plan.Caps, err = planCaps(p.Capabilities); err != nil {
		return nil, err
	}
	for i, r := range p.Rlimits {
		plan.Rlimits = append(plan.Rlimits, bootstrap.PlanRlimit{Type: uint32(r.Type), Index: uint32(i), Soft: r.Soft, Hard: r.Hard})
	}
	if s := cfg.Seccomp; s != nil {
		if err := checkFilter(s); err != nil {
			return nil, err
		}
		plan.Seccomp, plan.SeccompFlags = s.Program.Filter, uint32(s.Program.Flags)
		logrus.Debugf("linux.seccomp: a filter of %d instructions, flags %#x %v", len(s.Program.Filter)/8, s.Program.Flags, s.Flags)
	}
	if a := p.CPUAffinity; a != nil && len(a.Final) > 0 {
		if plan.Affinity, err = Mask("process.execCPUAffinity.final", a.Final); err != nil {
			return nil, err
		}
	}
	if err := planAttrs(cfg, plan); err != nil {
		return nil, err
	}
	if p.Terminal {
		// The launcher makes the pty of an exec, and the console of a
		// container's init with a mount namespace of its own; without
		// one, pid 1 makes it before its chroot, from the host's
		// /dev/ptmx, as runc.
		_, ownMounts := cfg.Namespace(configs.NEWNS)
		plan.TTY = &bootstrap.PlanTTY{Open: o.Exec || ownMounts}
		if s := p.ConsoleSize; s != nil {
			plan.TTY.HasSize, plan.TTY.Rows, plan.TTY.Cols = true, s.Height, s.Width
		}
	}
	return plan, nil
}

// planAttrs adds the memory policy, personality, I/O priority and
// scheduler.
func planAttrs(cfg *configs.Config, plan *bootstrap.Plan) error {
	if m := cfg.MemoryPolicy; m != nil {
		plan.MemPolicy = &bootstrap.PlanMemPolicy{Mode: int32(m.Mode), Flags: int32(m.Flags)}
		if len(m.Nodes) > 0 {
			nodes, err := Mask("linux.memoryPolicy.nodes", m.Nodes)
			if err != nil {
				return err
			}
			plan.MemPolicy.Nodes = nodes
		}
	}
	if pers := cfg.Personality; pers != nil {
		v := pers.Persona
		plan.Personality = &v
	}
	p := cfg.Process
	if io := p.IOPriority; io != nil {
		plan.IOPrio = &bootstrap.PlanIOPrio{Class: int32(io.Class), Priority: int32(io.Priority)}
	}
	if s := p.Scheduler; s != nil {
		plan.Sched = &bootstrap.PlanSched{Policy: s.Policy, Nice: s.Nice, Priority: s.Priority,
			Cpuset: cfg.Cgroup != nil && cfg.Cgroup.Resources.CpusetCpus != "",
			Flags:  s.Flags, Runtime: s.Runtime, Deadline: s.Deadline, Period: s.Period}
	}
	return nil
}

// planCaps is c as masks of the running kernel's capabilities. Names the
// kernel lacks are skipped, and ambient ones the kernel would refuse to
// raise (not both permitted and inheritable) left out, each with runc's
// warning: the process runs without them, as in runc.
func planCaps(c *configs.Capabilities) (bootstrap.PlanCaps, error) {
	last, err := caps.LastCap()
	if err != nil {
		return bootstrap.PlanCaps{}, fmt.Errorf("capabilities: %w", err)
	}
	m, skipped, err := caps.MasksOf(c, last)
	if err != nil {
		return bootstrap.PlanCaps{}, fmt.Errorf("process.capabilities: %w", err)
	}
	if len(skipped) > 0 {
		logrus.Warnf("process.capabilities: this kernel does not know %s; skipped", strings.Join(skipped, ", "))
	}
	raisable := m.Ambient & m.Permitted & m.Inheritable
	for v := 0; v <= last; v++ {
		if (m.Ambient&^raisable)&(1<<uint(v)) != 0 {
			logrus.Warnf("can't raise ambient capability %s: %v (it must also be permitted and inheritable)", caps.Name(v), unix.EPERM)
		}
	}
	return bootstrap.PlanCaps{
		Bounding: m.Bounding, Effective: m.Effective, Permitted: m.Permitted,
		Inheritable: m.Inheritable, Ambient: raisable, LastCap: uint32(last),
	}, nil
}

// planEnv is the process's environment as runc makes it: a key given
// more than once keeps its last value, in the place of that last one;
// when HOME is missing or empty, one "HOME=" entry that the launcher
// fills from the container's /etc/passwd (fill).
func planEnv(in []string) (env []string, fill bool) {
	env = configs.DedupEnv(in)
	for _, kv := range env {
		if kv == "HOME=" {
			return env, true
		}
	}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "HOME" && v != "" {
			return env, false
		}
	}
	return append(env, "HOME="), true
}

// InitialAffinity is process.execCPUAffinity.initial as a mask for the
// bootstrap message (nsexec sets it), nil when there is none.
func InitialAffinity(p *configs.Process) ([]uint64, error) {
	if p == nil || p.CPUAffinity == nil || len(p.CPUAffinity.Initial) == 0 {
		return nil, nil
	}
	return Mask("process.execCPUAffinity.initial", p.CPUAffinity.Initial)
}

// maxMaskBits is how many CPUs or NUMA nodes a mask may name (128 u64
// words; the kernel's own limit is its NR_CPUS, at most 8192).
const maxMaskBits = 8192

// Mask is the bit mask of ids (CPUs or nodes), as u64 words.
func Mask(field string, ids []int) ([]uint64, error) {
	top := 0
	for _, id := range ids {
		if id < 0 || id >= maxMaskBits {
			return nil, fmt.Errorf("%s: %d is out of range 0-%d", field, id, maxMaskBits-1)
		}
		top = max(top, id)
	}
	words := make([]uint64, top/64+1)
	for _, id := range ids {
		words[id/64] |= 1 << uint(id%64)
	}
	return words, nil
}
