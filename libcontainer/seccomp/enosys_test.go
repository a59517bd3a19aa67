package seccomp

import (
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

func TestEnosysArches(t *testing.T) {
	native, err := libseccomp.GetNativeArch()
	if err != nil || native != libseccomp.ArchAMD64 {
		t.Skipf("numbers below are x86_64's (native %v, %v)", native, err)
	}
	s := &configs.Seccomp{
		DefaultAction: "SCMP_ACT_ERRNO",
		Architectures: []string{"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"},
		Syscalls: []*configs.Syscall{
			{Names: []string{"read", "openat2", "no_such_syscall"}, Action: "SCMP_ACT_ALLOW"},
			{Names: []string{"mkdir"}, Action: "SCMP_ACT_ERRNO"},
		},
	}
	got, err := enosysArches(s)
	if err != nil {
		t.Fatal(err)
	}
	// openat2 is 437 on both; clone3 (435) is below it and not named.
	want := []stubArch{
		{audit: unix.AUDIT_ARCH_X86_64, max: 437, clone3: 435, x32: true},
		{audit: unix.AUDIT_ARCH_I386, max: 437, clone3: 435},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("arch %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := len(enosysStub(got)); n != (5+1+4+1+2)*sockFilterSize {
		t.Errorf("stub of %d bytes", n)
	}

	s.DefaultAction = "SCMP_ACT_ALLOW"
	if got, _ := enosysArches(s); got != nil {
		t.Errorf("an allowing default action got a stub: %+v", got)
	}
}
