package launch

import (
	"fmt"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
)

// PlanRootfs is what the launcher, the container's pid 1, finishes of its
// root after it built it (nsenter/final.c): masked and read-only
// paths, then a read-only /dev and "/". nil without a mount namespace of
// the container's own, where there is nothing to finish (specconv
// refuses masks there). Paths go cleaned, as the launcher takes them.
func PlanRootfs(cfg *configs.Config) (*bootstrap.PlanRootfs, error) {
	if _, ok := cfg.Namespace(configs.NEWNS); !ok {
		return nil, nil
	}
	r := &bootstrap.PlanRootfs{MountLabel: cfg.MountLabel, ReadonlyDev: rootfs.ReadonlyDev(cfg), ReadonlyRoot: cfg.Readonlyfs}
	var err error
	if r.Masked, err = planPaths("linux.maskedPaths", cfg.MaskPaths); err != nil {
		return nil, err
	}
	if r.Readonly, err = planPaths("linux.readonlyPaths", cfg.ReadonlyPaths); err != nil {
		return nil, err
	}
	if err := checkString("linux.mountLabel", r.MountLabel, maxLabel); err != nil {
		return nil, err
	}
	if err := checkString("the read-only /dev mount", r.ReadonlyDev, 3*bootstrap.PlanMaxPath); err != nil {
		return nil, err
	}
	return r, nil
}

// planPaths is paths cleaned, each checked to fit the launcher's bounds.
func planPaths(field string, paths []string) ([]string, error) {
	if len(paths) > bootstrap.PlanMaxPaths {
		return nil, fmt.Errorf("%s: %d paths, over the %d husk takes", field, len(paths), bootstrap.PlanMaxPaths)
	}
	var out []string
	for i, p := range paths {
		name := fmt.Sprintf("%s[%d]", field, i)
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%s: must be absolute, got %q", name, p)
		}
		p = filepath.Clean(p)
		if err := checkString(name, p, bootstrap.PlanMaxPath); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
