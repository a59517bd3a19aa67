package specconv

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/caps"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// process sets what init finally execs, and as whom.
func (c *converter) process() error {
	p := c.spec.Process
	if p == nil {
		return fieldErrorf("process", "missing")
	}
	if len(p.Args) == 0 {
		return fieldErrorf("process.args", "must not be empty")
	}
	if p.Args[0] == "" {
		return fieldErrorf("process.args[0]", "must not be empty")
	}
	if !filepath.IsAbs(p.Cwd) {
		return fieldErrorf("process.cwd", "must be absolute, got %q", p.Cwd)
	}
	for i, e := range p.Env {
		name, _, ok := strings.Cut(e, "=")
		if !ok || name == "" || strings.ContainsRune(e, 0) {
			return fieldErrorf(index("process.env", i), "want NAME=VALUE, got %q", e)
		}
	}
	fields, ids := configs.UserIDs(p.User.UID, p.User.GID, p.User.AdditionalGids)
	for i, id := range ids {
		if err := configs.CheckID(id); err != nil {
			return &FieldError{Field: fields[i], Err: err}
		}
	}
	if u := p.User.Umask; u != nil && *u > 0o777 {
		return fieldErrorf("process.user.umask", "must be at most 0777, got %#o", *u)
	}
	if o := p.OOMScoreAdj; o != nil && (*o < -1000 || *o > 1000) {
		return fieldErrorf("process.oomScoreAdj", "must be between -1000 and 1000, got %d", *o)
	}
	capabilities, unknown := convertCapabilities(p.Capabilities)
	if len(unknown) > 0 {
		c.warn("process.capabilities", unknownCapsWarning(unknown))
	}
	rlimits, err := convertRlimits(p.Rlimits)
	if err != nil {
		return err
	}
	scheduler, err := convertScheduler(p.Scheduler)
	if err != nil {
		return err
	}
	ioPriority, err := convertIOPriority(p.IOPriority)
	if err != nil {
		return err
	}
	affinity, err := convertCPUAffinity(p.ExecCPUAffinity)
	if err != nil {
		return err
	}
	c.cfg.Process = &configs.Process{
		Args: slices.Clone(p.Args),
		Env:  slices.Clone(p.Env),
		Cwd:  filepath.Clean(p.Cwd),
		User: configs.User{
			UID:            p.User.UID,
			GID:            p.User.GID,
			AdditionalGids: slices.Clone(p.User.AdditionalGids),
			Umask:          clonePtr(p.User.Umask),
		},
		Capabilities:    capabilities,
		NoNewPrivileges: p.NoNewPrivileges,
		Rlimits:         rlimits,
		OomScoreAdj:     clonePtr(p.OOMScoreAdj),
		Terminal:        p.Terminal,
		Scheduler:       scheduler,
		IOPriority:      ioPriority,
		CPUAffinity:     affinity,
	}
	return nil
}

// convertCapabilities copies the five sets, leaving out the names husk
// does not know, which it returns (once each) for a warning: runc ignores
// them too, so bundles written for a newer kernel still run. Names husk
// knows but the running kernel lacks are kept: init skips those.
func convertCapabilities(s *specs.LinuxCapabilities) (out *configs.Capabilities, unknown []string) {
	if s == nil {
		return nil, nil
	}
	out = &configs.Capabilities{}
	for _, set := range []struct {
		list []string
		dst  *[]string
	}{
		{s.Bounding, &out.Bounding},
		{s.Effective, &out.Effective},
		{s.Inheritable, &out.Inheritable},
		{s.Permitted, &out.Permitted},
		{s.Ambient, &out.Ambient},
	} {
		kept := []string{}
		for _, name := range set.list {
			if _, ok := caps.Value(name); ok {
				kept = append(kept, name)
			} else if !slices.Contains(unknown, name) {
				unknown = append(unknown, name)
			}
		}
		if set.list == nil {
			kept = nil
		}
		*set.dst = kept
	}
	return out, unknown
}

// unknownCapsWarning is runc's warning for capability names it ignores.
func unknownCapsWarning(unknown []string) string {
	return fmt.Sprintf("ignoring unknown or unavailable capabilities: [%s]", strings.Join(unknown, " "))
}

// rlimitTypes maps config.json's rlimit names to RLIMIT_* numbers.
var rlimitTypes = map[string]int{
	"RLIMIT_AS":         unix.RLIMIT_AS,
	"RLIMIT_CORE":       unix.RLIMIT_CORE,
	"RLIMIT_CPU":        unix.RLIMIT_CPU,
	"RLIMIT_DATA":       unix.RLIMIT_DATA,
	"RLIMIT_FSIZE":      unix.RLIMIT_FSIZE,
	"RLIMIT_LOCKS":      unix.RLIMIT_LOCKS,
	"RLIMIT_MEMLOCK":    unix.RLIMIT_MEMLOCK,
	"RLIMIT_MSGQUEUE":   unix.RLIMIT_MSGQUEUE,
	"RLIMIT_NICE":       unix.RLIMIT_NICE,
	"RLIMIT_NOFILE":     unix.RLIMIT_NOFILE,
	"RLIMIT_NPROC":      unix.RLIMIT_NPROC,
	"RLIMIT_RSS":        unix.RLIMIT_RSS,
	"RLIMIT_RTPRIO":     unix.RLIMIT_RTPRIO,
	"RLIMIT_RTTIME":     unix.RLIMIT_RTTIME,
	"RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING,
	"RLIMIT_STACK":      unix.RLIMIT_STACK,
}

// convertRlimits checks the rlimit names, their order and duplicates.
func convertRlimits(list []specs.POSIXRlimit) ([]configs.Rlimit, error) {
	var out []configs.Rlimit
	seen := map[string]bool{}
	for i, r := range list {
		field := index("process.rlimits", i)
		t, ok := rlimitTypes[r.Type]
		switch {
		case !ok:
			return nil, fieldErrorf(field+".type", "unknown %q", r.Type)
		case seen[r.Type]:
			return nil, fieldErrorf(field+".type", "duplicate %q", r.Type)
		case r.Soft > r.Hard:
			return nil, fieldErrorf(field, "%s soft limit %d is above the hard limit %d", r.Type, r.Soft, r.Hard)
		}
		seen[r.Type] = true
		out = append(out, configs.Rlimit{Type: t, Hard: r.Hard, Soft: r.Soft})
	}
	return out, nil
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
