package bootstrap

// #include "bootstrap.h"
import "C"

import (
	"encoding/binary"
	"unsafe"

	"github.com/vishvananda/netlink/nl"
)

// The attributes nested in AttrExecPlan (bootstrap.h).
const (
	AttrExecPlan = C.HUSK_ATTR_EXEC_PLAN

	PlanArgs         = C.HUSK_PLAN_ARGS
	PlanEnv          = C.HUSK_PLAN_ENV
	PlanCwd          = C.HUSK_PLAN_CWD
	PlanUID          = C.HUSK_PLAN_UID
	PlanGID          = C.HUSK_PLAN_GID
	PlanGroups       = C.HUSK_PLAN_GROUPS
	PlanUmask        = C.HUSK_PLAN_UMASK
	AttrPlanRlimit   = C.HUSK_PLAN_RLIMIT
	AttrPlanCaps     = C.HUSK_PLAN_CAPS
	PlanNoNewPrivs   = C.HUSK_PLAN_NNP
	PlanSeccomp      = C.HUSK_PLAN_SECCOMP
	PlanSeccompFlags = C.HUSK_PLAN_SECCOMP_FLAGS
	PlanHome         = C.HUSK_PLAN_HOME

	// SyncExecGo tells a Go init of an exec that the parent has moved it
	// into the container's cgroups: it may execve (protocol.go, step 6x).
	SyncExecGo SyncType = C.HUSK_SYNC_EXEC_GO
)

// Sizes of the fixed payloads, checked against the C structs.
const (
	planRlimitSize = 24
	planCapsSize   = 48
)

var (
	_ [planRlimitSize - unsafe.Sizeof(C.struct_husk_plan_rlimit{})]byte
	_ [unsafe.Sizeof(C.struct_husk_plan_rlimit{}) - planRlimitSize]byte
	_ [planCapsSize - unsafe.Sizeof(C.struct_husk_plan_caps{})]byte
	_ [unsafe.Sizeof(C.struct_husk_plan_caps{}) - planCapsSize]byte
)

// ExecPlan is the process of a `husk exec`, computed and checked by the
// parent, for nsexec to set up in C and exec without starting the Go
// runtime (nsenter/execproc.c). It holds only what that path does: the
// parent sends a config to the Go init instead for anything else.
type ExecPlan struct {
	Args []string
	// Env is the final environment, but for HOME when FillHome is set:
	// then exactly one entry is "HOME=", which nsexec fills with the
	// home of UID from the container's /etc/passwd ("/" without one).
	Env      []string
	FillHome bool
	Cwd      string
	UID, GID uint32
	Groups   []uint32
	Umask    uint32
	Rlimits  []PlanRlimit
	Caps     PlanCaps
	// NoNewPrivs sets no_new_privs; the filter is then loaded last,
	// right before execve, else before the user switch (it needs
	// CAP_SYS_ADMIN without no_new_privs).
	NoNewPrivs   bool
	Seccomp      []byte // struct sock_filter[], nil: no filter
	SeccompFlags uint32
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

// attr encodes p as the nested AttrExecPlan attribute.
func (p *ExecPlan) attr() *nl.RtAttr {
	a := nl.NewRtAttr(AttrExecPlan, nil)
	a.AddRtAttr(PlanArgs, nulList(p.Args))
	a.AddRtAttr(PlanEnv, nulList(p.Env))
	a.AddRtAttr(PlanCwd, []byte(p.Cwd))
	a.AddRtAttr(PlanUID, nl.Uint32Attr(p.UID))
	a.AddRtAttr(PlanGID, nl.Uint32Attr(p.GID))
	groups := make([]byte, 0, 4*len(p.Groups))
	for _, g := range p.Groups {
		groups = binary.NativeEndian.AppendUint32(groups, g)
	}
	a.AddRtAttr(PlanGroups, groups)
	a.AddRtAttr(PlanUmask, nl.Uint32Attr(p.Umask))
	for _, r := range p.Rlimits {
		b := binary.NativeEndian.AppendUint32(nil, r.Type)
		b = binary.NativeEndian.AppendUint32(b, r.Index)
		b = binary.NativeEndian.AppendUint64(b, r.Soft)
		a.AddRtAttr(AttrPlanRlimit, binary.NativeEndian.AppendUint64(b, r.Hard))
	}
	c := p.Caps
	var caps []byte
	for _, m := range []uint64{c.Bounding, c.Effective, c.Permitted, c.Inheritable, c.Ambient} {
		caps = binary.NativeEndian.AppendUint64(caps, m)
	}
	caps = binary.NativeEndian.AppendUint32(caps, c.LastCap)
	a.AddRtAttr(AttrPlanCaps, binary.NativeEndian.AppendUint32(caps, 0))
	if p.NoNewPrivs {
		a.AddRtAttr(PlanNoNewPrivs, nil)
	}
	if p.Seccomp != nil {
		a.AddRtAttr(PlanSeccomp, p.Seccomp)
		a.AddRtAttr(PlanSeccompFlags, nl.Uint32Attr(p.SeccompFlags))
	}
	if p.FillHome {
		a.AddRtAttr(PlanHome, nil)
	}
	return a
}

// nulList is each string followed by a NUL byte.
func nulList(list []string) []byte {
	var b []byte
	for _, s := range list {
		b = append(append(b, s...), 0)
	}
	return b
}
