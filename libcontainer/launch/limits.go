package launch

import (
	"fmt"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// The limits of a plan: each what the kernel itself takes, so that husk
// refuses, naming the field, only what could never run. Together they
// keep a plan far below bootstrap.PlanMax (16 MiB): 6 MiB of args and
// environment, 256 KiB of groups, a 32 KiB filter, a 4 MiB listener
// message, and strings of a page.
const (
	// MaxArgStrlen is MAX_ARG_STRLEN: one string of args or environment,
	// its NUL included.
	MaxArgStrlen = 32 * 4096
	// argMaxFloor and argMaxCeil bound what execve takes in all (fs/exec.c:
	// a quarter of the stack rlimit, at least ARG_MAX, at most 3/4 of
	// _STK_LIM).
	argMaxFloor = 32 * 4096
	argMaxCeil  = 6 << 20
	// MaxGroups is NGROUPS_MAX.
	MaxGroups = 65536
	// maxPath is PATH_MAX, its NUL included.
	maxPath = 4096
	// maxLabel bounds an LSM label: the kernel takes a page.
	maxLabel = 4095
	// maxFilter is BPF_MAXINSNS instructions of 8 bytes.
	maxFilter = 4096 * 8
	// MaxListenerMsg bounds the seccomp listener's message.
	MaxListenerMsg = 4 << 20
	// rlimNlimits is RLIM_NLIMITS: resources are 0 to 15.
	rlimNlimits = 16
)

// checkProcess refuses a process the launcher could not carry or the
// kernel could not exec.
func checkProcess(p *configs.Process, path string) error {
	// Also checked where they come in (specconv, exec's flags): a state
	// saved before that check must not run as root either.
	if err := configs.ValidIDs(p.User); err != nil {
		return err
	}
	if n := len(p.User.AdditionalGids); n > MaxGroups {
		return fmt.Errorf("process.user.additionalGids: %d groups, over the %d the kernel takes (NGROUPS_MAX)", n, MaxGroups)
	}
	for _, s := range []struct {
		field, v string
		max      int
	}{
		{"process.cwd", p.Cwd, maxPath}, {"the hook's path", path, maxPath},
		{"process.apparmorProfile", p.AppArmorProfile, maxLabel}, {"process.selinuxLabel", p.SelinuxLabel, maxLabel},
	} {
		if err := checkString(s.field, s.v, s.max); err != nil {
			return err
		}
	}
	if p.Cwd == "" {
		return fmt.Errorf("process.cwd: must not be empty")
	}
	for _, r := range p.Rlimits {
		if r.Type < 0 || r.Type >= rlimNlimits {
			return fmt.Errorf("process.rlimits: unknown resource %d", r.Type)
		}
	}
	return checkArgsEnv(p)
}

// checkArgsEnv refuses args and environment execve would not take:
// a string over MAX_ARG_STRLEN, or more in all than the stack rlimit the
// process will have allows (fs/exec.c counts each string with its NUL
// and a pointer).
func checkArgsEnv(p *configs.Process) error {
	total := map[string]int{}
	for _, l := range []struct {
		field string
		list  []string
	}{{"process.args", p.Args}, {"process.env", p.Env}} {
		for i, s := range l.list {
			if strings.IndexByte(s, 0) >= 0 {
				return fmt.Errorf("%s[%d]: contains a NUL byte", l.field, i)
			}
			if len(s)+1 > MaxArgStrlen {
				return fmt.Errorf("%s[%d]: %s, over the %s execve takes for one string (MAX_ARG_STRLEN)",
					l.field, i, size(len(s)+1), size(MaxArgStrlen))
			}
			total[l.field] += len(s) + 1 + 8
		}
	}
	n, limit := total["process.args"]+total["process.env"], argMax(p)
	if n <= limit {
		return nil
	}
	field := "process.args and process.env"
	if total["process.env"] > limit {
		field = "process.env"
	} else if total["process.args"] > limit {
		field = "process.args"
	}
	return fmt.Errorf("%s: %s of args and environment, over the %s execve allows (a quarter of the stack rlimit)",
		field, size(n), size(limit))
}

// argMax is what execve takes in args and environment for p: a quarter
// of the stack rlimit the process will have (its own, or the one husk
// passes on), at least ARG_MAX and at most 6 MiB.
func argMax(p *configs.Process) int {
	var stack uint64
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_STACK, &lim) == nil {
		stack = lim.Cur
	}
	for _, r := range p.Rlimits {
		if r.Type == unix.RLIMIT_STACK {
			stack = r.Soft
		}
	}
	if stack/4 > argMaxCeil {
		return argMaxCeil
	}
	return max(int(stack/4), argMaxFloor)
}

// checkFilter refuses a compiled filter the kernel would not load.
func checkFilter(s *configs.Seccomp) error {
	if s.Program == nil || len(s.Program.Filter) == 0 {
		return fmt.Errorf("linux.seccomp: no compiled filter (the parent compiles it first)")
	}
	if n := len(s.Program.Filter); n%8 != 0 || n > maxFilter {
		return fmt.Errorf("linux.seccomp: a filter of %d bytes is not a BPF program the kernel takes (at most 4096 instructions)", n)
	}
	return nil
}

// size words n bytes for a message: "2.3 MiB", "130 KiB", "12 bytes".
func size(n int) string {
	switch {
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkString refuses a NUL in v and v of max bytes or more.
func checkString(field, v string, max int) error {
	if strings.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("%s %q: contains a NUL byte", field, v)
	}
	if len(v) >= max {
		return fmt.Errorf("%s: %d bytes, over the %d the kernel takes", field, len(v), max-1)
	}
	return nil
}
