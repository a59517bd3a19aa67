package nsenter

/*
#include "nsexec.h"
#include "execproc.h"
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
	return m, nil
}

// goString is C.GoString with NULL (attribute absent) as "".
func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// ParseExecPlan parses an encoded bootstrap message and its EXEC_PLAN
// with nsexec's parsers (execplan.c), so tests can check them against
// bootstrap.ExecPlan's encoding. It is nil when the message has none.
func ParseExecPlan(b []byte) (*bootstrap.ExecPlan, error) {
	var out C.struct_husk_bootstrap
	var errbuf [512]C.char
	if len(b) == 0 {
		return nil, errors.New("empty message")
	}
	if C.husk_parse_bootstrap((*C.char)(unsafe.Pointer(&b[0])), C.size_t(len(b)), &out, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return nil, errors.New("nsexec: bootstrap message: " + C.GoString(&errbuf[0]))
	}
	defer C.husk_bootstrap_free(&out)
	if out.plan == nil {
		return nil, nil
	}
	var pl C.struct_husk_exec_plan
	if C.husk_parse_exec_plan(out.plan, out.plan_len, &pl, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return nil, errors.New("EXEC_PLAN: " + C.GoString(&errbuf[0]))
	}
	defer C.husk_exec_plan_free(&pl)
	p := &bootstrap.ExecPlan{
		Args: cStrings(pl.argv, int(pl.argc)), Env: cStrings(pl.envp, int(pl.envc)),
		FillHome: pl.fill_home != 0, Cwd: C.GoString(pl.cwd),
		UID: uint32(pl.uid), GID: uint32(pl.gid), Umask: uint32(pl.umask),
		NoNewPrivs: pl.no_new_privs != 0, SeccompFlags: uint32(pl.seccomp_flags),
		Caps: bootstrap.PlanCaps{
			Bounding: uint64(pl.caps.bounding), Effective: uint64(pl.caps.effective),
			Permitted: uint64(pl.caps.permitted), Inheritable: uint64(pl.caps.inheritable),
			Ambient: uint64(pl.caps.ambient), LastCap: uint32(pl.caps.last_cap),
		},
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
	return p, nil
}

func cStrings(v **C.char, n int) []string {
	var out []string
	for _, s := range unsafe.Slice(v, n) {
		out = append(out, C.GoString(s))
	}
	return out
}
