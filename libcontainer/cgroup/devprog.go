package cgroup

import (
	"encoding/binary"
	"fmt"

	devcfg "github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// A cgroup v2 device program (BPF_PROG_TYPE_CGROUP_DEVICE) gets a
// struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; }
// in r1, access_type being access<<16 | type, and returns 1 to allow.
//
// deviceProgram compiles the rules into, in pseudo-C:
//
//	type = access_type & 0xffff; access = access_type >> 16;
//	for each rule, last first:
//	    if rule matches (type, major, minor, access): return rule.allow
//	return 0
//
// An allow rule matches when every requested access is in its access;
// a deny rule when any is.

// insn is one eBPF instruction.
type insn struct {
	code     uint8
	dst, src uint8
	off      int16
	imm      int32
}

// Registers of the program.
const (
	rRet    = 0 // r0: the verdict
	rCtx    = 1 // r1: the context
	rAccess = 2
	rType   = 3
	rMajor  = 4
	rMinor  = 5
	rTmp    = 6
)

func ldxW(dst, src uint8, off int16) insn {
	return insn{code: unix.BPF_LDX | unix.BPF_MEM | unix.BPF_W, dst: dst, src: src, off: off}
}
func mov32Reg(dst, src uint8) insn {
	return insn{code: unix.BPF_ALU | unix.BPF_MOV | unix.BPF_X, dst: dst, src: src}
}
func and32Imm(dst uint8, imm int32) insn {
	return insn{code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, dst: dst, imm: imm}
}
func rsh32Imm(dst uint8, imm int32) insn {
	return insn{code: unix.BPF_ALU | unix.BPF_RSH | unix.BPF_K, dst: dst, imm: imm}
}
func mov64Imm(dst uint8, imm int32) insn {
	return insn{code: unix.BPF_ALU64 | unix.BPF_MOV | unix.BPF_K, dst: dst, imm: imm}
}
func jneImm(dst uint8, imm int32) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JNE | unix.BPF_K, dst: dst, imm: imm}
}
func jeqImm(dst uint8, imm int32) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, dst: dst, imm: imm}
}
func exit() insn { return insn{code: unix.BPF_JMP | unix.BPF_EXIT} }

// deviceProgram compiles rules (see above).
func deviceProgram(rules []*devcfg.Rule) ([]insn, error) {
	prog := []insn{
		ldxW(rAccess, rCtx, 0),
		mov32Reg(rType, rAccess),
		and32Imm(rType, 0xffff),
		rsh32Imm(rAccess, 16),
		ldxW(rMajor, rCtx, 4),
		ldxW(rMinor, rCtx, 8),
	}
	for i := len(rules) - 1; i >= 0; i-- {
		block, err := ruleBlock(rules[i])
		if err != nil {
			return nil, fmt.Errorf("device rule %q: %w", rules[i].CgroupString(), err)
		}
		prog = append(prog, block...)
	}
	return append(prog, mov64Imm(rRet, 0), exit()), nil
}

// ruleBlock is one rule's test: each check jumps past the block's end
// when it fails; falling through all of them returns the verdict.
func ruleBlock(r *devcfg.Rule) ([]insn, error) {
	var b []insn
	switch r.Type {
	case devcfg.WildcardDevice:
	case devcfg.CharDevice:
		b = append(b, jneImm(rType, unix.BPF_DEVCG_DEV_CHAR))
	case devcfg.BlockDevice:
		b = append(b, jneImm(rType, unix.BPF_DEVCG_DEV_BLOCK))
	default:
		return nil, fmt.Errorf("type %q has no device cgroup rule", string(r.Type))
	}
	access := accessBits(r.Permissions)
	const all = unix.BPF_DEVCG_ACC_MKNOD | unix.BPF_DEVCG_ACC_READ | unix.BPF_DEVCG_ACC_WRITE
	if access != all {
		b = append(b, mov32Reg(rTmp, rAccess))
		if r.Allow { // requested & ^allowed must be 0
			b = append(b, and32Imm(rTmp, int32(all&^access)), jneImm(rTmp, 0))
		} else { // requested & denied must not be 0
			b = append(b, and32Imm(rTmp, int32(access)), jeqImm(rTmp, 0))
		}
	}
	for _, n := range []struct {
		reg uint8
		val int64
	}{{rMajor, r.Major}, {rMinor, r.Minor}} {
		if n.val == devcfg.Wildcard {
			continue
		}
		if n.val < 0 || n.val > 1<<31-1 {
			return nil, fmt.Errorf("device number %d out of range", n.val)
		}
		b = append(b, jneImm(n.reg, int32(n.val)))
	}
	verdict := int32(0)
	if r.Allow {
		verdict = 1
	}
	b = append(b, mov64Imm(rRet, verdict), exit())
	// Every jump so far skips to the end of the block.
	for i := range b {
		if b[i].code&0x07 == unix.BPF_JMP && b[i].code != unix.BPF_JMP|unix.BPF_EXIT {
			b[i].off = int16(len(b) - i - 1)
		}
	}
	return b, nil
}

func accessBits(p devcfg.Permissions) int32 {
	var bits int32
	for _, c := range p {
		switch c {
		case 'r':
			bits |= unix.BPF_DEVCG_ACC_READ
		case 'w':
			bits |= unix.BPF_DEVCG_ACC_WRITE
		case 'm':
			bits |= unix.BPF_DEVCG_ACC_MKNOD
		}
	}
	return bits
}

// encode lays the program out as the kernel reads it (struct bpf_insn).
func encode(prog []insn) []byte {
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		var b [8]byte
		b[0] = in.code
		b[1] = in.dst&0x0f | in.src<<4
		binary.NativeEndian.PutUint16(b[2:], uint16(in.off))
		binary.NativeEndian.PutUint32(b[4:], uint32(in.imm))
		out = append(out, b[:]...)
	}
	return out
}
