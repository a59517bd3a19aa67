package seccomp

import (
	"encoding/binary"
	"slices"

	"github.com/husk-runtime/husk/libcontainer/configs"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The -ENOSYS stub. A profile lists the syscalls its author knew; one
// added to the kernel later falls to the default action, usually EPERM,
// and libc, which falls back to an older syscall only on ENOSYS, then
// fails. runc puts a short program before the filter: on each of the
// filter's architectures, a syscall numbered above every syscall the
// profile names returns ENOSYS, as on a kernel that lacks it. clone3,
// when the profile does not name it, returns ENOSYS too (glibc then
// uses clone). husk does the same. With an allowing default action
// nothing is added: the kernel answers ENOSYS itself for what it lacks.

// auditArches maps libseccomp's architectures to AUDIT_ARCH_* values, the
// architecture field of struct seccomp_data.
var auditArches = map[libseccomp.ScmpArch]uint32{
	libseccomp.ArchAMD64:   unix.AUDIT_ARCH_X86_64,
	libseccomp.ArchX86:     unix.AUDIT_ARCH_I386,
	libseccomp.ArchARM64:   unix.AUDIT_ARCH_AARCH64,
	libseccomp.ArchARM:     unix.AUDIT_ARCH_ARM,
	libseccomp.ArchPPC64LE: unix.AUDIT_ARCH_PPC64LE,
	libseccomp.ArchS390X:   unix.AUDIT_ARCH_S390X,
	libseccomp.ArchRISCV64: unix.AUDIT_ARCH_RISCV64,
}

// x32SyscallBit marks an x32 syscall on x86_64: the filter itself decides
// about those.
const x32SyscallBit = 0x40000000

// stubArch is what the stub checks on one architecture.
type stubArch struct {
	audit  uint32
	max    uint32 // the highest syscall number the profile names
	clone3 int64  // clone3's number when the profile does not name it, else -1
	x32    bool
}

// enosysArches lists, for the native architecture and each one of s's,
// the highest syscall number s names there. Architectures the stub does
// not know, or where s names no syscall, are left out.
func enosysArches(s *configs.Seccomp) ([]stubArch, error) {
	if s.DefaultAction == "SCMP_ACT_ALLOW" || s.DefaultAction == "SCMP_ACT_LOG" {
		return nil, nil
	}
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		return nil, err
	}
	arches := []libseccomp.ScmpArch{native}
	for _, name := range s.Architectures {
		if a, err := libseccomp.GetArchFromString(archName(name)); err == nil && !slices.Contains(arches, a) {
			arches = append(arches, a)
		}
	}
	var names []string
	for _, rule := range s.Syscalls {
		names = append(names, rule.Names...)
	}
	var out []stubArch
	for _, arch := range arches {
		audit, ok := auditArches[arch]
		if !ok {
			continue
		}
		sa := stubArch{audit: audit, clone3: -1, x32: arch == libseccomp.ArchAMD64}
		found := false
		for _, n := range names {
			nr, err := libseccomp.GetSyscallFromNameByArch(n, arch)
			if err != nil || nr < 0 { // unknown, or a multiplexed pseudo-syscall
				continue
			}
			found = true
			sa.max = max(sa.max, uint32(nr))
		}
		if !found {
			continue
		}
		if !slices.Contains(names, "clone3") {
			if nr, err := libseccomp.GetSyscallFromNameByArch("clone3", arch); err == nil && nr >= 0 && uint32(nr) <= sa.max {
				sa.clone3 = int64(nr)
			}
		}
		out = append(out, sa)
	}
	return out, nil
}

// sockFilter is one struct sock_filter.
type sockFilter struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

const (
	bpfLdAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgt    = unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K
	bpfJset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfJa     = unix.BPF_JMP | unix.BPF_JA
	bpfRet    = unix.BPF_RET | unix.BPF_K

	offNr   = 0 // struct seccomp_data: nr, then arch
	offArch = 4
)

// blockLen is the number of instructions of a's block in the stub.
func blockLen(a stubArch) int {
	n := 4 // load arch, compare, load nr, compare with max
	if a.x32 {
		n++
	}
	if a.clone3 >= 0 {
		n++
	}
	return n
}

// enosysStub is the program that goes before the filter: one block per
// architecture, then a jump over the shared "return ENOSYS" into the
// filter. Every jump is forward, as BPF requires.
func enosysStub(arches []stubArch) []byte {
	if len(arches) == 0 {
		return nil
	}
	total := 0
	for _, a := range arches {
		total += blockLen(a)
	}
	enosysAt, filterAt := total+1, total+2
	var prog []sockFilter
	// jump is the offset from the next instruction to target.
	jump := func(target int) uint8 { return uint8(target - len(prog) - 1) }
	for _, a := range arches {
		next := len(prog) + blockLen(a)
		prog = append(prog, sockFilter{code: bpfLdAbsW, k: offArch})
		prog = append(prog, sockFilter{code: bpfJeq, jf: jump(next), k: a.audit})
		prog = append(prog, sockFilter{code: bpfLdAbsW, k: offNr})
		if a.x32 {
			prog = append(prog, sockFilter{code: bpfJset, jt: jump(filterAt), k: x32SyscallBit})
		}
		if a.clone3 >= 0 {
			prog = append(prog, sockFilter{code: bpfJeq, jt: jump(enosysAt), k: uint32(a.clone3)})
		}
		prog = append(prog, sockFilter{code: bpfJgt, jt: jump(enosysAt), jf: jump(filterAt), k: a.max})
	}
	prog = append(prog, sockFilter{code: bpfJa, k: 1})
	prog = append(prog, sockFilter{code: bpfRet, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)})
	out := make([]byte, 0, len(prog)*sockFilterSize)
	for _, f := range prog {
		out = binary.NativeEndian.AppendUint16(out, f.code)
		out = append(out, f.jt, f.jf)
		out = binary.NativeEndian.AppendUint32(out, f.k)
	}
	return out
}
