// Package seccomp turns linux.seccomp into a BPF program and loads it.
//
// The parent (husk create) calls Compile, which uses libseccomp to build
// the program; init only calls Load, a single seccomp(2), as the last
// step before execve. A syscall name libseccomp does not know, and a
// syscall an architecture of the filter lacks, are left out the way
// libseccomp and runc leave them out: the profile still loads. As runc,
// syscalls newer than the profile get ENOSYS (enosys.go).
package seccomp

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Compile builds s into a BPF program and stores it in s.Program. Errors
// name the config.json field.
func Compile(s *configs.Seccomp) error {
	def, err := action(s.DefaultAction, s.DefaultErrnoRet)
	if err != nil {
		return fmt.Errorf("linux.seccomp.defaultAction: %w", err)
	}
	filter, err := libseccomp.NewFilter(def)
	if err != nil {
		return fmt.Errorf("linux.seccomp: new filter: %w", err)
	}
	defer filter.Release()
	for i, name := range s.Architectures {
		if err := addArch(filter, name); err != nil {
			return fmt.Errorf("linux.seccomp.architectures[%d]: %w", i, err)
		}
	}
	for i, rule := range s.Syscalls {
		if err := addRule(filter, def, rule); err != nil {
			return fmt.Errorf("linux.seccomp.syscalls[%d]: %w", i, err)
		}
	}
	flags, err := filterFlags(s)
	if err != nil {
		return err
	}
	prog, err := exportBPF(filter)
	if err != nil {
		return fmt.Errorf("linux.seccomp: %w", err)
	}
	arches, err := enosysArches(s)
	if err != nil {
		return fmt.Errorf("linux.seccomp: the -ENOSYS stub: %w", err)
	}
	prog = append(enosysStub(arches), prog...)
	s.Program = &configs.SeccompProgram{Filter: prog, Flags: flags}
	return nil
}

// actions maps config.json's action names to libseccomp's.
var actions = map[string]libseccomp.ScmpAction{
	"SCMP_ACT_KILL":         libseccomp.ActKillThread,
	"SCMP_ACT_KILL_THREAD":  libseccomp.ActKillThread,
	"SCMP_ACT_KILL_PROCESS": libseccomp.ActKillProcess,
	"SCMP_ACT_TRAP":         libseccomp.ActTrap,
	"SCMP_ACT_ERRNO":        libseccomp.ActErrno,
	"SCMP_ACT_TRACE":        libseccomp.ActTrace,
	"SCMP_ACT_ALLOW":        libseccomp.ActAllow,
	"SCMP_ACT_LOG":          libseccomp.ActLog,
	"SCMP_ACT_NOTIFY":       libseccomp.ActNotify,
}

// action is the libseccomp action for name; errno and trace return
// errnoRet, EPERM when it is not given.
func action(name string, errnoRet *uint) (libseccomp.ScmpAction, error) {
	a, ok := actions[name]
	if !ok {
		return libseccomp.ActInvalid, fmt.Errorf("unknown action %q", name)
	}
	if a == libseccomp.ActErrno || a == libseccomp.ActTrace {
		ret := uint(unix.EPERM)
		if errnoRet != nil {
			ret = *errnoRet
		}
		a = a.SetReturnCode(int16(ret))
	}
	return a, nil
}

// addArch adds an architecture ("SCMP_ARCH_X86") to the filter.
func addArch(filter *libseccomp.ScmpFilter, name string) error {
	arch, err := libseccomp.GetArchFromString(strings.TrimPrefix(name, "SCMP_ARCH_"))
	if err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	if err := filter.AddArch(arch); err != nil {
		return fmt.Errorf("add %q: %w", name, err)
	}
	return nil
}

// ops maps config.json's operators to libseccomp's.
var ops = map[string]libseccomp.ScmpCompareOp{
	"SCMP_CMP_NE":        libseccomp.CompareNotEqual,
	"SCMP_CMP_LT":        libseccomp.CompareLess,
	"SCMP_CMP_LE":        libseccomp.CompareLessOrEqual,
	"SCMP_CMP_EQ":        libseccomp.CompareEqual,
	"SCMP_CMP_GE":        libseccomp.CompareGreaterEqual,
	"SCMP_CMP_GT":        libseccomp.CompareGreater,
	"SCMP_CMP_MASKED_EQ": libseccomp.CompareMaskedEqual,
}

// addRule adds one syscalls entry. Names libseccomp cannot resolve are
// skipped, and so is a rule whose action is the default one (libseccomp
// refuses it and it would change nothing).
func addRule(filter *libseccomp.ScmpFilter, def libseccomp.ScmpAction, rule *configs.Syscall) error {
	act, err := action(rule.Action, rule.ErrnoRet)
	if err != nil {
		return fmt.Errorf("action: %w", err)
	}
	if act == def {
		logrus.Debugf("seccomp: %v has the default action %s, no rule needed", rule.Names, rule.Action)
		return nil
	}
	conds, err := conditions(rule.Args)
	if err != nil {
		return err
	}
	for i, name := range rule.Names {
		nr, err := libseccomp.GetSyscallFromName(name)
		if err != nil {
			logrus.Debugf("seccomp: syscall %q is unknown to libseccomp, skipped", name)
			continue
		}
		for _, set := range conds {
			if err := filter.AddRuleConditional(nr, act, set); err != nil {
				return fmt.Errorf("names[%d] %q: %w", i, name, err)
			}
		}
	}
	return nil
}

// conditions turns args into the condition sets to add, one rule each.
// All conditions go in one rule (they must all hold) unless an argument
// is compared twice: libseccomp cannot put that in one rule, so each
// condition becomes its own rule (any may hold), as runc does.
func conditions(args []*configs.SeccompArg) ([][]libseccomp.ScmpCondition, error) {
	var all []libseccomp.ScmpCondition
	seen := map[uint]bool{}
	repeated := false
	for i, a := range args {
		op, ok := ops[a.Op]
		if !ok {
			return nil, fmt.Errorf("args[%d].op: unknown operator %q", i, a.Op)
		}
		values := []uint64{a.Value}
		if op == libseccomp.CompareMaskedEqual {
			values = append(values, a.ValueTwo)
		}
		c, err := libseccomp.MakeCondition(a.Index, op, values...)
		if err != nil {
			return nil, fmt.Errorf("args[%d]: %w", i, err)
		}
		repeated = repeated || seen[a.Index]
		seen[a.Index] = true
		all = append(all, c)
	}
	if !repeated {
		return [][]libseccomp.ScmpCondition{all}, nil
	}
	sets := make([][]libseccomp.ScmpCondition, len(all))
	for i, c := range all {
		sets[i] = []libseccomp.ScmpCondition{c}
	}
	return sets, nil
}

// flagBits maps config.json's flags to SECCOMP_FILTER_FLAG_* bits.
var flagBits = map[string]uint{
	"SECCOMP_FILTER_FLAG_TSYNC":              unix.SECCOMP_FILTER_FLAG_TSYNC,
	"SECCOMP_FILTER_FLAG_LOG":                unix.SECCOMP_FILTER_FLAG_LOG,
	"SECCOMP_FILTER_FLAG_SPEC_ALLOW":         unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW,
	"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV": unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
}

// filterFlags are the seccomp(2) flags of s: its own, and NEW_LISTENER
// when a rule notifies (with TSYNC that needs TSYNC_ESRCH).
func filterFlags(s *configs.Seccomp) (uint, error) {
	var flags uint
	for i, f := range s.Flags {
		bit, ok := flagBits[f]
		if !ok {
			return 0, fmt.Errorf("linux.seccomp.flags[%d]: unknown flag %q", i, f)
		}
		flags |= bit
	}
	if s.UsesNotify() {
		flags |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
		if flags&unix.SECCOMP_FILTER_FLAG_TSYNC != 0 {
			flags |= unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
		}
	}
	return flags, nil
}

// exportBPF reads the filter's BPF program back from libseccomp, through
// a memfd (the libseccomp 2.5 in Debian 12 cannot export to memory).
func exportBPF(filter *libseccomp.ScmpFilter) ([]byte, error) {
	f, err := memfd("husk-seccomp")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := filter.ExportBPF(f); err != nil {
		return nil, fmt.Errorf("export BPF: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("export BPF: %w", err)
	}
	prog, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("export BPF: %w", err)
	}
	if len(prog) == 0 || len(prog)%sockFilterSize != 0 {
		return nil, errors.New("export BPF: libseccomp wrote no whole program")
	}
	return prog, nil
}
