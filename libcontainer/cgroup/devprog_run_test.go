package cgroup

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// devCtx is a request as the kernel hands it to the program.
type devCtx struct {
	typ, access  int32
	major, minor uint32
}

// run interprets prog for ctx: the unit tests check the verdicts of a
// compiled program without loading it. It knows exactly the
// instructions deviceProgram emits.
func run(prog []insn, ctx devCtx) (int64, error) {
	var reg [11]uint64
	mem := [3]uint32{uint32(ctx.access<<16 | ctx.typ), ctx.major, ctx.minor}
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.code {
		case unix.BPF_LDX | unix.BPF_MEM | unix.BPF_W:
			reg[in.dst] = uint64(mem[in.off/4])
		case unix.BPF_ALU | unix.BPF_MOV | unix.BPF_X:
			reg[in.dst] = uint64(uint32(reg[in.src]))
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			reg[in.dst] = uint64(uint32(reg[in.dst]) & uint32(in.imm))
		case unix.BPF_ALU | unix.BPF_RSH | unix.BPF_K:
			reg[in.dst] = uint64(uint32(reg[in.dst]) >> uint32(in.imm))
		case unix.BPF_ALU64 | unix.BPF_MOV | unix.BPF_K:
			reg[in.dst] = uint64(int64(in.imm))
		case unix.BPF_JMP | unix.BPF_JNE | unix.BPF_K:
			if reg[in.dst] != uint64(int64(in.imm)) {
				pc += int(in.off)
			}
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			if reg[in.dst] == uint64(int64(in.imm)) {
				pc += int(in.off)
			}
		case unix.BPF_JMP | unix.BPF_EXIT:
			return int64(reg[rRet]), nil
		default:
			return 0, fmt.Errorf("pc %d: unknown opcode %#x", pc, in.code)
		}
	}
	return 0, fmt.Errorf("fell off the end")
}
