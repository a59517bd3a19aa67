package libcontainer

import (
	"fmt"
	"os"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/caps"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// EnvExecPath, set to "go", makes every exec take the Go init's path: to
// compare both paths, or to step around a problem in the C one.
const EnvExecPath = "HUSK_EXEC_PATH"

// maxPlanBytes bounds the plan in the bootstrap message (nsexec takes up
// to 1 MiB): a bigger environment goes through the Go init's CONFIG.
const maxPlanBytes = 512 << 10

// execPlan is cfg's process as a plan that nsexec sets up and execs in C
// (bootstrap.ExecPlan), or nil and the reason it needs the Go init: the
// rare settings the C path leaves to Go. Values the Go init would refuse
// are left to it too, so that its error is the one the user reads.
func execPlan(cfg *configs.Config, o *ExecOpts) (*bootstrap.ExecPlan, string) {
	p := cfg.Process
	if why := needsGoInit(cfg, o); why != "" {
		return nil, why
	}
	last, err := caps.LastCap()
	if err != nil {
		return nil, "capabilities: " + err.Error()
	}
	m, skipped, err := caps.MasksOf(p.Capabilities, last)
	if err != nil {
		return nil, "process.capabilities: " + err.Error()
	}
	plan := &bootstrap.ExecPlan{
		Args: p.Args, Cwd: p.Cwd, UID: p.User.UID, GID: p.User.GID,
		Groups: p.User.AdditionalGids, Umask: 0o022, NoNewPrivs: p.NoNewPrivileges,
		Caps: bootstrap.PlanCaps{
			Bounding: m.Bounding, Effective: m.Effective, Permitted: m.Permitted,
			Inheritable: m.Inheritable, Ambient: ambientRaisable(m), LastCap: uint32(last),
		},
	}
	if p.User.Umask != nil {
		plan.Umask = *p.User.Umask
	}
	plan.Env, plan.FillHome = planEnv(p.Env)
	for i, r := range p.Rlimits {
		plan.Rlimits = append(plan.Rlimits, bootstrap.PlanRlimit{Type: uint32(r.Type), Index: uint32(i), Soft: r.Soft, Hard: r.Hard})
	}
	if s := cfg.Seccomp; s != nil {
		plan.Seccomp, plan.SeccompFlags = s.Program.Filter, uint32(s.Program.Flags)
	}
	if len(skipped) > 0 {
		logrus.Warnf("process.capabilities: this kernel does not know %s; skipped", strings.Join(skipped, ", "))
	}
	return plan, ""
}

// needsGoInit names what in cfg's process only the Go init sets up, or "".
func needsGoInit(cfg *configs.Config, o *ExecOpts) string {
	p := cfg.Process
	s := cfg.Seccomp
	switch {
	case os.Getenv(EnvExecPath) == "go":
		return EnvExecPath + "=go"
	case p.Terminal:
		return "process.terminal"
	case s != nil && (s.UsesNotify() || s.Program == nil || s.Program.Flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER != 0):
		return "a seccomp listener"
	case p.AppArmorProfile != "" || p.SelinuxLabel != "":
		return "an LSM exec label"
	case p.Scheduler != nil, p.IOPriority != nil, p.CPUAffinity != nil:
		return "process.scheduler, ioPriority or execCPUAffinity"
	case cfg.Personality != nil, cfg.MemoryPolicy != nil:
		return "linux.personality or memoryPolicy"
	case o.SubCgroups != nil:
		return "exec --cgroup"
	case len(p.Args) == 0 || hasNul(p.Args) || hasNul(p.Env) || hasNul([]string{p.Cwd}) || p.Cwd == "":
		return "args, env or cwd the Go init refuses"
	case planSize(p) > maxPlanBytes:
		return fmt.Sprintf("args and env over %d bytes", maxPlanBytes)
	}
	for _, r := range p.Rlimits {
		if r.Type < 0 {
			return "a bad rlimit"
		}
	}
	return ""
}

func hasNul(list []string) bool {
	for _, s := range list {
		if strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
	return false
}

func planSize(p *configs.Process) int {
	n := len(p.Cwd)
	for _, l := range [][]string{p.Args, p.Env} {
		for _, s := range l {
			n += len(s) + 1
		}
	}
	return n
}

// planEnv is the Go init's processEnv for the plan: deduplicated, and
// when HOME is missing or empty, one "HOME=" entry that nsexec fills
// from the container's /etc/passwd (fill).
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

// ambientRaisable is m's ambient set less what the kernel would refuse to
// raise (not both permitted and inheritable), with the Go init's warning
// for each: the process runs without them, as in runc.
func ambientRaisable(m caps.Masks) uint64 {
	ok := m.Ambient & m.Permitted & m.Inheritable
	for v := 0; v < 64; v++ {
		if (m.Ambient&^ok)&(1<<uint(v)) != 0 {
			logrus.Warnf("can't raise ambient capability %s (it must also be permitted and inheritable): %v", caps.Name(v), unix.EPERM)
		}
	}
	return ok
}
