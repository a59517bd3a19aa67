package libcontainer

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ParseSubCgroups reads exec's --cgroup values as runc does: "SUB" puts
// the process in sub-cgroup SUB of every one of the container's cgroups;
// "CTRL[,CTRL]:SUB" in SUB of those cgroup v1 controllers only (the
// others keep the container's own). The result maps a controller ("" for
// all) to SUB, a path below the container's cgroup.
func ParseSubCgroups(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	subs := map[string]string{}
	for _, v := range values {
		ctrls, sub, ok := strings.Cut(v, ":")
		if !ok {
			ctrls, sub = "", v
		}
		sub, ok = subPath(sub)
		if !ok {
			return nil, fmt.Errorf("--cgroup %q: bad sub cgroup path: it leads out of the container's cgroup (want SUB or CONTROLLER:SUB below it)", v)
		}
		for _, c := range strings.Split(ctrls, ",") {
			if _, dup := subs[c]; dup {
				return nil, fmt.Errorf("--cgroup %q: %q given twice", v, c)
			}
			subs[c] = sub
		}
	}
	return subs, nil
}

// subPath is sub as runc takes it, joined to the container's cgroup
// (path.Join(base, sub)) and made relative to it again: "" for the
// cgroup itself; ok is false when it leads out of it.
func subPath(sub string) (string, bool) {
	const base = "/cgroup"
	p := path.Join(base, sub)
	if p == base {
		return "", true
	}
	return strings.CutPrefix(p, base+"/")
}

// joinSubCgroups moves pid into the container's cgroups, then into the
// sub-cgroups subs names (ParseSubCgroups), which must exist, as in runc.
func (c *Container) joinSubCgroups(pid int, subs map[string]string) error {
	if err := c.JoinCgroups(pid); err != nil {
		return err
	}
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	paths := m.Paths()
	for ctrl := range subs {
		if _, ok := paths[ctrl]; ctrl != "" && !ok {
			return fmt.Errorf("--cgroup %s:%s: the container has no %q cgroup", ctrl, subs[ctrl], ctrl)
		}
	}
	for ctrl, dir := range paths {
		sub, ok := subs[ctrl]
		if !ok {
			if sub, ok = subs[""]; !ok {
				continue
			}
		}
		procs := filepath.Join(dir, sub, "cgroup.procs")
		if err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("--cgroup %s: move pid %d into %s: %w", sub, pid, filepath.Join(dir, sub), err)
		}
	}
	return nil
}
