package bootstrap

/*
#include "hookplan.h"
*/
import "C"

import (
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
	var e planEncoder
	e.add(RecHooksKind, cString(p.Kind))
	e.add(RecHooksState, p.State)
	e.add(RecHooksDir, cString(p.Dir))
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
		rec := u32s([]uint32{uint32(h.Timeout), hasEnv, uint32(len(h.Args)), uint32(len(h.Env))})
		if err := hookString(f+".path", h.Path); err != nil {
			return nil, err
		}
		rec = append(rec, cString(h.Path)...)
		for k, list := range [][]string{h.Args, h.Env} {
			name := [2]string{"args", "env"}[k]
			for j, s := range list {
				if err := hookString(fmt.Sprintf("%s.%s[%d]", f, name, j), s); err != nil {
					return nil, err
				}
				rec = append(rec, cString(s)...)
			}
		}
		e.add(RecHooksHook, rec)
	}
	if len(e.b) > HooksMax {
		return nil, fmt.Errorf("%s: %d bytes, over the %d husk's launcher takes", field, len(e.b), HooksMax)
	}
	return e.b, nil
}

// hookString refuses a NUL byte in s.
func hookString(field, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s %q: contains a NUL byte", field, s)
	}
	return nil
}
