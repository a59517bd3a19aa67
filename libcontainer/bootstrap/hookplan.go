package bootstrap

/*
#include "hookplan.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The hook plan's records and bounds (hookplan.h).
const (
	RecHooksKind  = C.HUSK_HOOKS_KIND
	RecHooksState = C.HUSK_HOOKS_STATE
	RecHooksDir   = C.HUSK_HOOKS_DIR
	RecHooksHook  = C.HUSK_HOOKS_HOOK

	HooksMax      = C.HUSK_HOOKS_MAX
	HooksMaxCount = C.HUSK_HOOKS_MAX_COUNT
	HooksMaxArgs  = C.HUSK_HOOKS_MAX_ARGS
)

// Hook is one hook as the launcher runs it: Env nil is an empty
// environment; Timeout 0 is none.
type Hook struct {
	Path    string
	Args    []string
	Env     []string
	Timeout int
}

// HookPlan is the createContainer hooks pid 1 runs (nsenter/hooks.c):
// each with State on stdin, in Dir, stopping at the first that fails.
type HookPlan struct {
	Kind  string
	State []byte
	Dir   string
	Hooks []Hook
}

// Encode checks every value (errors name hooks.KIND[i].FIELD and the
// value) and encodes the plan.
func (p *HookPlan) Encode() ([]byte, error) {
	field := "hooks." + p.Kind
	if len(p.Hooks) > HooksMaxCount {
		return nil, fmt.Errorf("%s: %d hooks, over the %d husk's launcher takes", field, len(p.Hooks), HooksMaxCount)
	}
	if err := hookString(field, p.Kind); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(p.Dir, "/") {
		return nil, fmt.Errorf("%s: the hooks' directory %q is not absolute", field, p.Dir)
	}
	if err := hookString(field+": the hooks' directory", p.Dir); err != nil {
		return nil, err
	}
	var b []byte
	b = hookRecord(b, RecHooksKind, cstr(p.Kind))
	b = hookRecord(b, RecHooksState, p.State)
	b = hookRecord(b, RecHooksDir, cstr(p.Dir))
	for i, h := range p.Hooks {
		f := fmt.Sprintf("%s[%d]", field, i)
		if !strings.HasPrefix(h.Path, "/") {
			return nil, fmt.Errorf("%s.path %q: not absolute", f, h.Path)
		}
		if h.Timeout < 0 || int64(h.Timeout) > 1<<31 {
			return nil, fmt.Errorf("%s.timeout %d: out of range", f, h.Timeout)
		}
		if len(h.Args) > HooksMaxArgs || len(h.Env) > HooksMaxArgs {
			return nil, fmt.Errorf("%s: %d args and %d env entries, over the %d husk's launcher takes", f, len(h.Args), len(h.Env), HooksMaxArgs)
		}
		hasEnv := uint32(0)
		if h.Env != nil {
			hasEnv = 1
		}
		rec := make([]byte, 16)
		binary.NativeEndian.PutUint32(rec[0:], uint32(h.Timeout))
		binary.NativeEndian.PutUint32(rec[4:], hasEnv)
		binary.NativeEndian.PutUint32(rec[8:], uint32(len(h.Args)))
		binary.NativeEndian.PutUint32(rec[12:], uint32(len(h.Env)))
		if err := hookString(f+".path", h.Path); err != nil {
			return nil, err
		}
		rec = append(rec, cstr(h.Path)...)
		for k, list := range [][]string{h.Args, h.Env} {
			name := [2]string{"args", "env"}[k]
			for j, s := range list {
				if err := hookString(fmt.Sprintf("%s.%s[%d]", f, name, j), s); err != nil {
					return nil, err
				}
				rec = append(rec, cstr(s)...)
			}
		}
		b = hookRecord(b, RecHooksHook, rec)
	}
	if len(b) > HooksMax {
		return nil, fmt.Errorf("%s: %d bytes, over the %d husk's launcher takes", field, len(b), HooksMax)
	}
	return b, nil
}

// hookString refuses a NUL byte in s.
func hookString(field, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s %q: contains a NUL byte", field, s)
	}
	return nil
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// hookRecord appends a record: type, length, the payload padded to 8.
func hookRecord(b []byte, typ uint32, payload []byte) []byte {
	b = binary.NativeEndian.AppendUint32(b, typ)
	b = binary.NativeEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}
