package nsenter

/*
#include "nsexec.h"
#include "launch.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
)

// ParseBootstrap parses an encoded bootstrap message with nsexec.c's
// parser, so tests can check it against (*bootstrap.Message).Encode.
func ParseBootstrap(b []byte) (bootstrap.Message, error) {
	var out C.struct_husk_bootstrap
	var errbuf [512]C.char
	var p *C.char
	if len(b) > 0 {
		p = (*C.char)(unsafe.Pointer(&b[0]))
	}
	if C.husk_parse_bootstrap(p, C.size_t(len(b)), &out, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return bootstrap.Message{}, errors.New("nsexec: bootstrap message: " + C.GoString(&errbuf[0]))
	}
	defer C.husk_bootstrap_free(&out)

	m := bootstrap.Message{
		CloneFlags:  uint32(out.clone_flags),
		UIDMap:      goString(out.uid_map),
		GIDMap:      goString(out.gid_map),
		OomScoreAdj: goString(out.oom_score_adj),
		TimeOffsets: goString(out.timens_offsets),
	}
	for i := 0; i < int(out.n_ns); i++ {
		ns := out.ns[i]
		m.NsPaths = append(m.NsPaths, C.GoString(ns.name)+":"+C.GoString(ns.path))
	}
	for i := 0; i < int(out.n_cgroup_tasks); i++ {
		m.CgroupTasks = append(m.CgroupTasks, uint32(out.cgroup_tasks[i]))
	}
	if out.affinity != nil {
		m.Affinity = u64Slice(out.affinity, int(out.affinity_words))
	}
	return m, nil
}

// goString is C.GoString with NULL (attribute absent) as "".
func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// ParsePlan parses a PLAN frame's payload with the launcher's parser
// (plan.c), so tests can check it against (*bootstrap.Plan).Encode.
func ParsePlan(b []byte) (*bootstrap.Plan, error) {
	var pl C.struct_husk_plan
	var errbuf [512]C.char
	var in *C.char
	if len(b) > 0 {
		in = (*C.char)(unsafe.Pointer(&b[0]))
	}
	if C.husk_parse_plan(in, C.size_t(len(b)), &pl, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return nil, errors.New("PLAN: " + C.GoString(&errbuf[0]))
	}
	defer C.husk_plan_free(&pl)
	p := &bootstrap.Plan{
		Args: cStrings(pl.argv, int(pl.argc)), Env: cStrings(pl.envp, int(pl.envc)),
		FillHome: pl.fill_home != 0, Cwd: C.GoString(pl.cwd), Path: goString(pl.path),
		UID: uint32(pl.uid), GID: uint32(pl.gid), Umask: uint32(pl.umask),
		NoNewPrivs: pl.no_new_privs != 0, Keyring: pl.keyring != 0, SeccompFlags: uint32(pl.seccomp_flags),
		Caps: bootstrap.PlanCaps{
			Bounding: uint64(pl.caps.bounding), Effective: uint64(pl.caps.effective),
			Permitted: uint64(pl.caps.permitted), Inheritable: uint64(pl.caps.inheritable),
			Ambient: uint64(pl.caps.ambient), LastCap: uint32(pl.caps.last_cap),
		},
		AppArmor: goString(pl.apparmor), SELinux: goString(pl.selinux),
	}
	for _, g := range unsafe.Slice(pl.groups, int(pl.n_groups)) {
		p.Groups = append(p.Groups, uint32(g))
	}
	for _, r := range unsafe.Slice(pl.rlimits, int(pl.n_rlimits)) {
		p.Rlimits = append(p.Rlimits, bootstrap.PlanRlimit{Type: uint32(r._type), Index: uint32(r.index), Soft: uint64(r.soft), Hard: uint64(r.hard)})
	}
	if pl.filter != nil {
		p.Seccomp = C.GoBytes(unsafe.Pointer(pl.filter), C.int(pl.n_filter*8))
	}
	if pl.affinity != nil {
		p.Affinity = u64Slice(pl.affinity, int(pl.affinity_words))
	}
	if pl.has_mempolicy != 0 {
		p.MemPolicy = &bootstrap.PlanMemPolicy{Mode: int32(pl.mempolicy.mode), Flags: int32(pl.mempolicy.flags)}
		if pl.nodes != nil {
			p.MemPolicy.Nodes = u64Slice(pl.nodes, int(pl.node_words))
		}
	}
	if pl.has_personality != 0 {
		v := uint32(pl.personality)
		p.Personality = &v
	}
	if pl.has_ioprio != 0 {
		p.IOPrio = &bootstrap.PlanIOPrio{Class: int32(pl.ioprio.class), Priority: int32(pl.ioprio.priority)}
	}
	if pl.has_sched != 0 {
		s := pl.sched
		p.Sched = &bootstrap.PlanSched{Policy: uint32(s.policy), Nice: int32(s.nice), Priority: uint32(s.priority),
			Cpuset: s.cpuset != 0, Flags: uint64(s.flags), Runtime: uint64(s.runtime), Deadline: uint64(s.deadline),
			Period: uint64(s.period)}
	}
	if pl.listener_msg != nil {
		p.Listener = &bootstrap.PlanListener{Msg: C.GoBytes(unsafe.Pointer(pl.listener_msg), C.int(pl.listener_len))}
		for _, at := range pl.listener_holes[:pl.n_listener_holes] {
			p.Listener.PidAt = append(p.Listener.PidAt, uint32(at))
		}
	}
	if pl.has_tty != 0 {
		t := pl.tty
		p.TTY = &bootstrap.PlanTTY{Open: t.flags&C.HUSK_TTY_OPEN != 0, HasSize: t.flags&C.HUSK_TTY_SIZE != 0, Rows: uint16(t.rows), Cols: uint16(t.cols)}
	}
	if pl.has_uts != 0 {
		p.System = &bootstrap.PlanSystem{Hostname: C.GoString(pl.hostname), Domainname: C.GoString(pl.domainname)}
		kv := cStrings(pl.sysctl, int(2*pl.n_sysctls))
		for i := 0; i+1 < len(kv); i += 2 {
			p.System.Sysctls = append(p.System.Sysctls, bootstrap.PlanSysctl{Key: kv[i], Value: kv[i+1]})
		}
	}
	if pl.has_rootfs != 0 {
		p.Rootfs = &bootstrap.PlanRootfs{Masked: cStrings(pl.masked, int(pl.n_masked)),
			Readonly: cStrings(pl.rdonly, int(pl.n_rdonly)), MountLabel: goString(pl.mount_label),
			ReadonlyDev: goString(pl.rodev_name), ReadonlyRoot: pl.rootfs_flags&C.HUSK_ROOTFS_RO_ROOT != 0}
	}
	return p, nil
}

func cStrings(v **C.char, n int) []string {
	var out []string
	for _, s := range unsafe.Slice(v, n) {
		out = append(out, C.GoString(s))
	}
	return out
}

func u64Slice[T any](p *T, n int) []uint64 {
	out := make([]uint64, n)
	copy(out, unsafe.Slice((*uint64)(unsafe.Pointer(p)), n))
	return out
}

// CapName is the launcher's name for capability v (creds.c), so tests can
// check it against libcontainer/caps.
func CapName(v uint32) string {
	var buf [16]C.char
	return C.GoString(C.husk_cap_name(C.uint32_t(v), &buf[0], C.size_t(len(buf))))
}
