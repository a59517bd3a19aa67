package specconv

import (
	"path/filepath"
	"slices"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// Seccomp names config.json may use. Syscall names are not checked here:
// a name libseccomp does not know is skipped when the filter is compiled,
// as runc does, so one profile serves kernels old and new.
var (
	seccompActions = []specs.LinuxSeccompAction{
		specs.ActKill, specs.ActKillProcess, specs.ActKillThread, specs.ActTrap,
		specs.ActErrno, specs.ActTrace, specs.ActAllow, specs.ActLog, specs.ActNotify,
	}
	seccompOps = []specs.LinuxSeccompOperator{
		specs.OpNotEqual, specs.OpLessThan, specs.OpLessEqual, specs.OpEqualTo,
		specs.OpGreaterEqual, specs.OpGreaterThan, specs.OpMaskedEqual,
	}
	seccompArchs = []specs.Arch{
		specs.ArchX86, specs.ArchX86_64, specs.ArchX32, specs.ArchARM, specs.ArchAARCH64,
		specs.ArchMIPS, specs.ArchMIPS64, specs.ArchMIPS64N32, specs.ArchMIPSEL,
		specs.ArchMIPSEL64, specs.ArchMIPSEL64N32, specs.ArchPPC, specs.ArchPPC64,
		specs.ArchPPC64LE, specs.ArchS390, specs.ArchS390X, specs.ArchPARISC,
		specs.ArchPARISC64, specs.ArchRISCV64, specs.ArchLOONGARCH64, specs.ArchM68K,
		specs.ArchSH, specs.ArchSHEB,
	}
	seccompFlags = []specs.LinuxSeccompFlag{
		"SECCOMP_FILTER_FLAG_TSYNC", specs.LinuxSeccompFlagLog,
		specs.LinuxSeccompFlagSpecAllow, specs.LinuxSeccompFlagWaitKillableRecv,
	}
)

// maxSyscallArgs is how many arguments a syscall has at most.
const maxSyscallArgs = 6

// seccomp checks linux.seccomp and copies it into the config.
func (c *converter) seccomp() error {
	s := c.linux().Seccomp
	if s == nil {
		return nil
	}
	const field = "linux.seccomp"
	out := &configs.Seccomp{
		DefaultAction:    string(s.DefaultAction),
		DefaultErrnoRet:  clonePtr(s.DefaultErrnoRet),
		ListenerPath:     s.ListenerPath,
		ListenerMetadata: s.ListenerMetadata,
	}
	if err := checkAction(field+".defaultAction", s.DefaultAction, s.DefaultErrnoRet, field+".defaultErrnoRet"); err != nil {
		return err
	}
	if s.DefaultAction == specs.ActNotify {
		// Everything init does after loading the filter would wait for
		// a listener that does not have the fd yet.
		return fieldErrorf(field+".defaultAction", "%s cannot be the default action", specs.ActNotify)
	}
	for i, a := range s.Architectures {
		if !slices.Contains(seccompArchs, a) {
			return fieldErrorf(index(field+".architectures", i), "unknown architecture %q", a)
		}
		out.Architectures = append(out.Architectures, string(a))
	}
	for i, f := range s.Flags {
		if !slices.Contains(seccompFlags, f) {
			return fieldErrorf(index(field+".flags", i), "unknown flag %q", f)
		}
		out.Flags = append(out.Flags, string(f))
	}
	for i, sc := range s.Syscalls {
		rule, err := convertSyscall(index(field+".syscalls", i), sc)
		if err != nil {
			return err
		}
		out.Syscalls = append(out.Syscalls, rule)
	}
	if err := checkListener(field, s, out.UsesNotify()); err != nil {
		return err
	}
	c.cfg.Seccomp = out
	return nil
}

// checkAction checks an action name, and that errnoRet (named errnoField)
// is only given to the actions that return it.
func checkAction(field string, a specs.LinuxSeccompAction, errnoRet *uint, errnoField string) error {
	if !slices.Contains(seccompActions, a) {
		return fieldErrorf(field, "unknown action %q", a)
	}
	if errnoRet == nil {
		return nil
	}
	if a != specs.ActErrno && a != specs.ActTrace {
		return fieldErrorf(errnoField, "only %s and %s return an errno, not %s", specs.ActErrno, specs.ActTrace, a)
	}
	if *errnoRet > 0xffff {
		return fieldErrorf(errnoField, "must be at most 65535, got %d", *errnoRet)
	}
	return nil
}

// convertSyscall checks one entry of linux.seccomp.syscalls.
func convertSyscall(field string, sc specs.LinuxSyscall) (*configs.Syscall, error) {
	if len(sc.Names) == 0 {
		return nil, fieldErrorf(field+".names", "must not be empty")
	}
	for i, n := range sc.Names {
		if n == "" {
			return nil, fieldErrorf(index(field+".names", i), "must not be empty")
		}
		if sc.Action == specs.ActNotify && n == "write" {
			// runc's reason: the runtime's own logging writes while the
			// filter is in place and no agent answers yet.
			return nil, fieldErrorf(index(field+".names", i), "SCMP_ACT_NOTIFY cannot be used for the write syscall: it would deadlock the runtime's own logging")
		}
		if sc.Action == specs.ActNotify && n == "sendmsg" {
			// husk init hands the notify fd to the listener with sendmsg
			// after loading the filter.
			return nil, fieldErrorf(index(field+".names", i), "%s cannot be used for sendmsg", specs.ActNotify)
		}
	}
	if err := checkAction(field+".action", sc.Action, sc.ErrnoRet, field+".errnoRet"); err != nil {
		return nil, err
	}
	out := &configs.Syscall{Names: slices.Clone(sc.Names), Action: string(sc.Action), ErrnoRet: clonePtr(sc.ErrnoRet)}
	for i, a := range sc.Args {
		af := index(field+".args", i)
		if a.Index >= maxSyscallArgs {
			return nil, fieldErrorf(af+".index", "must be below %d, got %d", maxSyscallArgs, a.Index)
		}
		if !slices.Contains(seccompOps, a.Op) {
			return nil, fieldErrorf(af+".op", "unknown operator %q", a.Op)
		}
		out.Args = append(out.Args, &configs.SeccompArg{Index: a.Index, Value: a.Value, ValueTwo: a.ValueTwo, Op: string(a.Op)})
	}
	return out, nil
}

// checkListener checks listenerPath against the use of SCMP_ACT_NOTIFY.
func checkListener(field string, s *specs.LinuxSeccomp, notify bool) error {
	switch {
	case notify && s.ListenerPath == "":
		return fieldErrorf(field+".listenerPath", "must be set: a rule uses %s", specs.ActNotify)
	case s.ListenerPath != "" && !filepath.IsAbs(s.ListenerPath):
		return fieldErrorf(field+".listenerPath", "must be absolute, got %q", s.ListenerPath)
	case slices.Contains(s.Flags, specs.LinuxSeccompFlagWaitKillableRecv) && !notify:
		return fieldErrorf(field+".flags", "%s needs a rule with %s", specs.LinuxSeccompFlagWaitKillableRecv, specs.ActNotify)
	}
	return nil
}
