package nsenter

/*
#include "nsexec.h"
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
	return m, nil
}

// goString is C.GoString with NULL (attribute absent) as "".
func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}
