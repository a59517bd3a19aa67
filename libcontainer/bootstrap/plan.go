package bootstrap

/*
#include "bootstrap.h"

// The record list (bootstrap.h's HUSK_PLAN_RECORDS) as a table Go reads.
#define HUSK_PLAN_ROW_(name, type, flags) { type, flags, #name },
struct husk_plan_row { unsigned type, flags; const char *name; };
static const struct husk_plan_row husk_plan_rows[] = { HUSK_PLAN_RECORDS(HUSK_PLAN_ROW_) };

// Row i of the list; its name is NULL past the end.
static struct husk_plan_row husk_plan_row(unsigned i)
{
	struct husk_plan_row end = { 0, 0, 0 };
	return i < sizeof(husk_plan_rows) / sizeof(husk_plan_rows[0]) ? husk_plan_rows[i] : end;
}
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// The PLAN frame: its sync type, its record types (bootstrap.h) and its
// bound.
const (
	SyncPlan SyncType = C.HUSK_SYNC_PLAN

	RecArgs         = C.HUSK_PLAN_ARGS
	RecEnv          = C.HUSK_PLAN_ENV
	RecCwd          = C.HUSK_PLAN_CWD
	RecUID          = C.HUSK_PLAN_UID
	RecGID          = C.HUSK_PLAN_GID
	RecGroups       = C.HUSK_PLAN_GROUPS
	RecUmask        = C.HUSK_PLAN_UMASK
	RecRlimit       = C.HUSK_PLAN_RLIMIT
	RecCaps         = C.HUSK_PLAN_CAPS
	RecNoNewPrivs   = C.HUSK_PLAN_NNP
	RecSeccomp      = C.HUSK_PLAN_SECCOMP
	RecSeccompFlags = C.HUSK_PLAN_SECCOMP_FLAGS
	RecHome         = C.HUSK_PLAN_HOME
	RecPath         = C.HUSK_PLAN_PATH
	RecAffinity     = C.HUSK_PLAN_AFFINITY
	RecMemPolicy    = C.HUSK_PLAN_MEMPOLICY
	RecPersonality  = C.HUSK_PLAN_PERSONALITY
	RecIOPrio       = C.HUSK_PLAN_IOPRIO
	RecSched        = C.HUSK_PLAN_SCHED
	RecAppArmor     = C.HUSK_PLAN_APPARMOR
	RecSELinux      = C.HUSK_PLAN_SELINUX
	RecListener     = C.HUSK_PLAN_LISTENER
	RecTTY          = C.HUSK_PLAN_TTY
	RecKeyring      = C.HUSK_PLAN_KEYRING
	RecRootfs       = C.HUSK_PLAN_ROOTFS
	RecMasked       = C.HUSK_PLAN_MASKED
	RecRdonly       = C.HUSK_PLAN_RDONLY
	RecMountLabel   = C.HUSK_PLAN_MOUNT_LABEL
	RecUTS          = C.HUSK_PLAN_UTS
	RecSysctl       = C.HUSK_PLAN_SYSCTL

	// PlanMaxPaths bounds PlanRootfs.Masked and Readonly; PlanMaxPath
	// one path's bytes, its NUL included.
	PlanMaxPaths = C.HUSK_PLAN_MAX_PATHS
	PlanMaxPath  = C.HUSK_PLAN_MAX_PATH
	// PlanMaxName bounds a host or domain name's bytes, its NUL
	// included; PlanMaxSysctls the sysctls, PlanMaxSysctl a key's or a
	// value's bytes, its NUL included.
	PlanMaxName    = C.HUSK_PLAN_MAX_NAME
	PlanMaxSysctls = C.HUSK_PLAN_MAX_SYSCTLS
	PlanMaxSysctl  = C.HUSK_PLAN_MAX_SYSCTL

	// PlanMax bounds a PLAN frame's payload, in bytes.
	PlanMax = C.HUSK_PLAN_MAX
	// PlanMaxHoles bounds PlanListener.PidAt.
	PlanMaxHoles = C.HUSK_PLAN_MAX_HOLES
)

// PlanRecord is one line of bootstrap.h's record list.
type PlanRecord struct {
	Type     int
	Name     string // as the C parser names it in errors: "ARGS", ...
	Required bool   // every PLAN frame has it
	Repeat   bool   // may come more than once
}

// PlanRecords is bootstrap.h's record list (HUSK_PLAN_RECORDS), the one
// description of the records: tests check every record on it is in the
// encoder, the C parser, the reference decoder and the round trip.
func PlanRecords() []PlanRecord {
	var out []PlanRecord
	for i := C.uint(0); ; i++ {
		r := C.husk_plan_row(i)
		if r.name == nil {
			return out
		}
		out = append(out, PlanRecord{Type: int(r._type), Name: C.GoString(r.name),
			Required: r.flags&C.HUSK_REC_REQUIRED != 0, Repeat: r.flags&C.HUSK_REC_REPEAT != 0})
	}
}

// Sizes of the fixed payloads, checked against the C structs.
const (
	planRlimitSize = 24
	planCapsSize   = 48
	planSchedSize  = 48
)

var (
	_ [planRlimitSize - unsafe.Sizeof(C.struct_husk_plan_rlimit{})]byte
	_ [unsafe.Sizeof(C.struct_husk_plan_rlimit{}) - planRlimitSize]byte
	_ [planCapsSize - unsafe.Sizeof(C.struct_husk_plan_caps{})]byte
	_ [unsafe.Sizeof(C.struct_husk_plan_caps{}) - planCapsSize]byte
	_ [planSchedSize - unsafe.Sizeof(C.struct_husk_plan_sched{})]byte
	_ [unsafe.Sizeof(C.struct_husk_plan_sched{}) - planSchedSize]byte
	_ [8 - unsafe.Sizeof(C.struct_husk_plan_tty{})]byte
	_ [8 - unsafe.Sizeof(C.struct_husk_plan_ioprio{})]byte
	_ [8 - unsafe.Sizeof(C.struct_husk_plan_mempolicy{})]byte
)

// Plan is a process as the launcher (nsenter/launch.c) sets it up and
// execs it: computed and checked by the parent (libcontainer/launch), for
// a container's init and for every exec alike.
type Plan struct {
	Args []string
	// Env is the final environment, but for HOME when FillHome is set:
	// then exactly one entry is "HOME=", which the launcher fills with
	// the home of UID from the container's /etc/passwd ("/" without one).
	Env      []string
	FillHome bool
	Cwd      string
	// Path is the file to exec; empty: Args[0] looked up in PATH.
	Path     string
	UID, GID uint32
	Groups   []uint32
	Umask    uint32
	Rlimits  []PlanRlimit
	Caps     PlanCaps
	// NoNewPrivs sets no_new_privs; the filter is then loaded last,
	// else before the user switch (it needs CAP_SYS_ADMIN without it).
	NoNewPrivs   bool
	Keyring      bool   // join a new session keyring
	Seccomp      []byte // struct sock_filter[], nil: no filter
	SeccompFlags uint32
	Affinity     []uint64 // execCPUAffinity.final as a CPU mask; nil: none
	MemPolicy    *PlanMemPolicy
	Personality  *uint32
	IOPrio       *PlanIOPrio
	Sched        *PlanSched
	AppArmor     string // exec profile, "" for none
	SELinux      string // exec label, "" for none
	Listener     *PlanListener
	TTY          *PlanTTY
	// Rootfs is what pid 1 finishes of a container's root: only for
	// a container's init with a mount namespace of its own.
	Rootfs *PlanRootfs
	// System is what a container's init sets of its namespaces.
	System *PlanSystem
}

// PlanSystem is what a container's pid 1 sets of its namespaces
// (nsenter/system.c): the host and domain names ("": leave it) and the
// sysctls, written in this order.
type PlanSystem struct {
	Hostname, Domainname string
	Sysctls              []PlanSysctl
}

// PlanSysctl is one of linux.sysctl.
type PlanSysctl struct{ Key, Value string }

// PlanRootfs is what the launcher does to a container's root after it
// built it, in runc's order (nsenter/final.c): mask Masked, make
// Readonly read-only (clean absolute paths), then a read-only /dev
// (ReadonlyDev names its mount in errors: "" for none) and "/"
// (ReadonlyRoot).
type PlanRootfs struct {
	Masked, Readonly []string
	MountLabel       string
	ReadonlyDev      string
	ReadonlyRoot     bool
}

// PlanRlimit is one process.rlimits entry; Index is its place there.
type PlanRlimit struct {
	Type, Index uint32
	Soft, Hard  uint64
}

// PlanCaps are the capability sets as masks of the running kernel's
// capabilities (0..LastCap); Bounding is what stays in the bounding set.
type PlanCaps struct {
	Bounding, Effective, Permitted, Inheritable, Ambient uint64
	LastCap                                              uint32
}

// PlanMemPolicy is linux.memoryPolicy; Nodes a node mask (nil: none).
type PlanMemPolicy struct {
	Mode, Flags int32
	Nodes       []uint64
}

// PlanIOPrio is process.ioPriority.
type PlanIOPrio struct{ Class, Priority int32 }

// PlanSched is process.scheduler, as sched_setattr(2) takes it; Cpuset
// says the container has linux.resources.cpu.cpus (a refusal then gets
// runc's words).
type PlanSched struct {
	Policy                           uint32
	Nice                             int32
	Priority                         uint32
	Cpuset                           bool
	Flags, Runtime, Deadline, Period uint64
}

// PlanListener is the seccomp listener's message (the container process
// state); the process's pid, in decimal, goes in at each offset of
// PidAt (ascending offsets into Msg; none: the message is complete).
type PlanListener struct {
	Msg   []byte
	PidAt []uint32
}

// PlanTTY is process.terminal: Open makes the launcher open the pty and
// send its master (an exec; a container's init with a mount namespace of
// its own, whose pty is bound onto /dev/console: without one, pid 1
// made it already);
// Rows and Cols are process.consoleSize when HasSize.
type PlanTTY struct {
	Open, HasSize bool
	Rows, Cols    uint16
}

// Encode serialises p as the PLAN frame's payload. It fails only past
// PlanMax, which the launch package's limits keep it under.
func (p *Plan) Encode() ([]byte, error) {
	var e planEncoder
	e.add(RecArgs, nulList(p.Args))
	e.add(RecEnv, nulList(p.Env))
	e.add(RecCwd, cString(p.Cwd))
	if p.Path != "" {
		e.add(RecPath, cString(p.Path))
	}
	e.u32(RecUID, p.UID)
	e.u32(RecGID, p.GID)
	e.add(RecGroups, u32s(p.Groups))
	e.u32(RecUmask, p.Umask)
	for _, r := range p.Rlimits {
		e.add(RecRlimit, u64s(u32s([]uint32{r.Type, r.Index}), r.Soft, r.Hard))
	}
	c := p.Caps
	caps := u64s(nil, c.Bounding, c.Effective, c.Permitted, c.Inheritable, c.Ambient)
	e.add(RecCaps, append(caps, u32s([]uint32{c.LastCap, 0})...))
	e.flag(RecNoNewPrivs, p.NoNewPrivs)
	e.flag(RecHome, p.FillHome)
	e.flag(RecKeyring, p.Keyring)
	if p.Seccomp != nil {
		e.add(RecSeccomp, p.Seccomp)
		e.u32(RecSeccompFlags, p.SeccompFlags)
	}
	if p.Affinity != nil {
		e.add(RecAffinity, u64s(nil, p.Affinity...))
	}
	if m := p.MemPolicy; m != nil {
		e.add(RecMemPolicy, u64s(u32s([]uint32{uint32(m.Mode), uint32(m.Flags)}), m.Nodes...))
	}
	if p.Personality != nil {
		e.u32(RecPersonality, *p.Personality)
	}
	if io := p.IOPrio; io != nil {
		e.add(RecIOPrio, u32s([]uint32{uint32(io.Class), uint32(io.Priority)}))
	}
	if s := p.Sched; s != nil {
		var cpuset uint32
		if s.Cpuset {
			cpuset = 1
		}
		b := u32s([]uint32{s.Policy, uint32(s.Nice), s.Priority, cpuset})
		e.add(RecSched, u64s(b, s.Flags, s.Runtime, s.Deadline, s.Period))
	}
	if p.AppArmor != "" {
		e.add(RecAppArmor, cString(p.AppArmor))
	}
	if p.SELinux != "" {
		e.add(RecSELinux, cString(p.SELinux))
	}
	if l := p.Listener; l != nil {
		head := append([]uint32{uint32(len(l.PidAt))}, l.PidAt...)
		e.add(RecListener, append(u32s(head), l.Msg...))
	}
	if t := p.TTY; t != nil {
		var flags uint32
		if t.Open {
			flags |= C.HUSK_TTY_OPEN
		}
		if t.HasSize {
			flags |= C.HUSK_TTY_SIZE
		}
		b := binary.NativeEndian.AppendUint32(nil, flags)
		b = binary.NativeEndian.AppendUint16(b, t.Rows)
		e.add(RecTTY, binary.NativeEndian.AppendUint16(b, t.Cols))
	}
	if r := p.Rootfs; r != nil {
		e.rootfs(r)
	}
	if s := p.System; s != nil {
		e.add(RecUTS, nulList([]string{s.Hostname, s.Domainname}))
		var kv []string
		for _, c := range s.Sysctls {
			kv = append(kv, c.Key, c.Value)
		}
		if len(kv) > 0 {
			e.add(RecSysctl, nulList(kv))
		}
	}
	if len(e.b) > PlanMax {
		return nil, fmt.Errorf("the process's plan is %d bytes, over the %d husk's launcher takes", len(e.b), PlanMax)
	}
	return e.b, nil
}

// planEncoder appends records: u32 type, u32 length, payload, zeros to
// a multiple of 8 bytes.
type planEncoder struct{ b []byte }

func (e *planEncoder) add(typ int, payload []byte) {
	e.b = binary.NativeEndian.AppendUint32(e.b, uint32(typ))
	e.b = binary.NativeEndian.AppendUint32(e.b, uint32(len(payload)))
	e.b = append(e.b, payload...)
	e.b = append(e.b, make([]byte, (8-len(payload)%8)%8)...)
}

func (e *planEncoder) rootfs(r *PlanRootfs) {
	var flags uint32
	if r.ReadonlyDev != "" {
		flags |= C.HUSK_ROOTFS_RO_DEV
	}
	if r.ReadonlyRoot {
		flags |= C.HUSK_ROOTFS_RO_ROOT
	}
	b := u32s([]uint32{flags})
	if r.ReadonlyDev != "" {
		b = append(b, cString(r.ReadonlyDev)...)
	}
	e.add(RecRootfs, b)
	if len(r.Masked) > 0 {
		e.add(RecMasked, nulList(r.Masked))
	}
	if len(r.Readonly) > 0 {
		e.add(RecRdonly, nulList(r.Readonly))
	}
	if r.MountLabel != "" {
		e.add(RecMountLabel, cString(r.MountLabel))
	}
}

func (e *planEncoder) u32(typ int, v uint32) { e.add(typ, u32s([]uint32{v})) }

func (e *planEncoder) flag(typ int, on bool) {
	if on {
		e.add(typ, nil)
	}
}

func u32s(vs []uint32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.NativeEndian.AppendUint32(b, v)
	}
	return b
}

func u64s(b []byte, vs ...uint64) []byte {
	for _, v := range vs {
		b = binary.NativeEndian.AppendUint64(b, v)
	}
	return b
}

// cString is s with its terminating NUL.
func cString(s string) []byte { return append([]byte(s), 0) }

// nulList is each string followed by a NUL byte.
func nulList(list []string) []byte {
	var b []byte
	for _, s := range list {
		b = append(append(b, s...), 0)
	}
	return b
}
