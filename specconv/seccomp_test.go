package specconv

import (
	"errors"
	"reflect"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// withSeccomp is the example with linux.seccomp set to s.
func withSeccomp(s *specs.LinuxSeccomp) *specs.Spec {
	return withSpec(func(sp *specs.Spec) { sp.Linux.Seccomp = s })
}

func TestConvertSeccomp(t *testing.T) {
	s := &specs.LinuxSeccomp{
		DefaultAction:    specs.ActErrno,
		DefaultErrnoRet:  ptr(uint(38)),
		Architectures:    []specs.Arch{specs.ArchX86_64, specs.ArchX86},
		Flags:            []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagLog, specs.LinuxSeccompFlagWaitKillableRecv},
		ListenerPath:     "/run/listener.sock",
		ListenerMetadata: "meta",
		Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read", "write"}, Action: specs.ActAllow},
			{Names: []string{"mkdir"}, Action: specs.ActErrno, ErrnoRet: ptr(uint(1))},
			{Names: []string{"personality"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Value: 0xffffffff, Op: specs.OpEqualTo},
				{Index: 1, Value: 0xff, ValueTwo: 8, Op: specs.OpMaskedEqual},
			}},
			{Names: []string{"chmod"}, Action: specs.ActNotify},
			{Names: []string{"no_such_syscall"}, Action: specs.ActKillProcess},
		},
	}
	got := convert(t, withSeccomp(s)).Seccomp
	want := &configs.Seccomp{
		DefaultAction:    "SCMP_ACT_ERRNO",
		DefaultErrnoRet:  ptr(uint(38)),
		Architectures:    []string{"SCMP_ARCH_X86_64", "SCMP_ARCH_X86"},
		Flags:            []string{"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"},
		ListenerPath:     "/run/listener.sock",
		ListenerMetadata: "meta",
		Syscalls: []*configs.Syscall{
			{Names: []string{"read", "write"}, Action: "SCMP_ACT_ALLOW"},
			{Names: []string{"mkdir"}, Action: "SCMP_ACT_ERRNO", ErrnoRet: ptr(uint(1))},
			{Names: []string{"personality"}, Action: "SCMP_ACT_ALLOW", Args: []*configs.SeccompArg{
				{Index: 0, Value: 0xffffffff, Op: "SCMP_CMP_EQ"},
				{Index: 1, Value: 0xff, ValueTwo: 8, Op: "SCMP_CMP_MASKED_EQ"},
			}},
			{Names: []string{"chmod"}, Action: "SCMP_ACT_NOTIFY"},
			{Names: []string{"no_such_syscall"}, Action: "SCMP_ACT_KILL_PROCESS"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("seccomp\n got: %s\nwant: %s", dump(got), dump(want))
	}
	if !got.UsesNotify() {
		t.Error("UsesNotify() = false with a SCMP_ACT_NOTIFY rule")
	}
	// The copy is deep: editing the spec afterwards changes nothing.
	s.Syscalls[0].Names[0] = "open"
	*s.DefaultErrnoRet = 1
	if got.Syscalls[0].Names[0] != "read" || *got.DefaultErrnoRet != 38 {
		t.Error("the converted profile shares memory with the spec")
	}
}

func TestConvertSeccompNone(t *testing.T) {
	if got := convert(t, Example()).Seccomp; got != nil {
		t.Errorf("no linux.seccomp gave %s", dump(got))
	}
}

func TestConvertSeccompErrors(t *testing.T) {
	allow := func(names ...string) specs.LinuxSyscall {
		return specs.LinuxSyscall{Names: names, Action: specs.ActAllow}
	}
	for _, tc := range []struct {
		want string
		s    specs.LinuxSeccomp
	}{
		{`linux.seccomp.defaultAction: unknown action ""`, specs.LinuxSeccomp{}},
		{`linux.seccomp.defaultAction: unknown action "SCMP_ACT_DENY"`, specs.LinuxSeccomp{DefaultAction: "SCMP_ACT_DENY"}},
		{`linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action`,
			specs.LinuxSeccomp{DefaultAction: specs.ActNotify, ListenerPath: "/l"}},
		{`linux.seccomp.defaultErrnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE return an errno, not SCMP_ACT_ALLOW`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, DefaultErrnoRet: ptr(uint(1))}},
		{`linux.seccomp.architectures[1]: unknown architecture "SCMP_ARCH_Z80"`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Architectures: []specs.Arch{specs.ArchX86, "SCMP_ARCH_Z80"}}},
		{`linux.seccomp.flags[0]: unknown flag "SECCOMP_FILTER_FLAG_FAST"`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Flags: []specs.LinuxSeccompFlag{"SECCOMP_FILTER_FLAG_FAST"}}},
		{`linux.seccomp.flags: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs a rule with SCMP_ACT_NOTIFY`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Flags: []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagWaitKillableRecv}}},
		{`linux.seccomp.syscalls[1].names: must not be empty`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{allow("read"), allow()}}},
		{`linux.seccomp.syscalls[0].names[1]: must not be empty`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{allow("read", "")}}},
		{`linux.seccomp.syscalls[0].action: unknown action "allow"`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Names: []string{"read"}, Action: "allow"}}}},
		{`linux.seccomp.syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE return an errno, not SCMP_ACT_KILL`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
				{Names: []string{"read"}, Action: specs.ActKill, ErrnoRet: ptr(uint(1))}}}},
		{`linux.seccomp.syscalls[0].errnoRet: must be at most 65535, got 65536`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
				{Names: []string{"read"}, Action: specs.ActErrno, ErrnoRet: ptr(uint(65536))}}}},
		{`linux.seccomp.syscalls[0].args[1].index: must be below 6, got 6`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
				{Names: []string{"read"}, Action: specs.ActErrno, Args: []specs.LinuxSeccompArg{
					{Index: 0, Op: specs.OpEqualTo}, {Index: 6, Op: specs.OpEqualTo}}}}}},
		{`linux.seccomp.syscalls[0].args[0].op: unknown operator "=="`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
				{Names: []string{"read"}, Action: specs.ActErrno, Args: []specs.LinuxSeccompArg{{Op: "=="}}}}}},
		{`linux.seccomp.listenerPath: must be set: a rule uses SCMP_ACT_NOTIFY`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Names: []string{"mkdir"}, Action: specs.ActNotify}}}},
		{`linux.seccomp.listenerPath: must be absolute, got "l.sock"`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "l.sock"}},
		{`linux.seccomp.syscalls[0].names[1]: SCMP_ACT_NOTIFY cannot be used for sendmsg`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "/l", Syscalls: []specs.LinuxSyscall{
				{Names: []string{"mkdir", "sendmsg"}, Action: specs.ActNotify}}}},
		{`linux.seccomp.syscalls[1].names[0]: SCMP_ACT_NOTIFY cannot be used for the write syscall: it would deadlock the runtime's own logging`,
			specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "/l", Syscalls: []specs.LinuxSyscall{
				{Names: []string{"mkdir"}, Action: specs.ActNotify}, {Names: []string{"write"}, Action: specs.ActNotify}}}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			s := tc.s
			c, _, err := Convert(withSeccomp(&s), Options{Bundle: bundle})
			if err == nil {
				t.Fatalf("Convert = %s, want an error", dump(c.Seccomp))
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %v\nwant: %s", err, tc.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error %#v is not a FieldError", err)
			}
		})
	}
}
