package launch

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"golang.org/x/sys/unix"
)

// cgroupSteps are the steps of a {"type": "cgroup"} mount, as Go init's
// libcontainer/rootfs/cgroup.go makes it: with cgroup v2 the unified
// hierarchy (a cgroup2 filesystem in a cgroup namespace, else a bind of
// the container's own directory); with v1 a tmpfs holding one directory
// per host hierarchy (a cgroup filesystem, or a bind), the co-mounted
// controllers' symlinks, the tmpfs made read-only when asked. base is the
// mount's step so far (flags, attributes, propagation, error head); own
// is the container's /proc/PID/cgroup; table the parent's mount table.
func cgroupSteps(cfg *configs.Config, m *configs.Mount, base bootstrap.MountStep, own map[string]string, table rootfs.Mounts) ([]bootstrap.MountStep, error) {
	if own == nil {
		return nil, fmt.Errorf("type cgroup: the container's cgroups are not known")
	}
	_, cgroupns := cfg.Namespace(configs.NEWCGROUP)
	if rootfs.CgroupV2() {
		s := base
		if cgroupns {
			s.Kind, s.Dest, s.Source, s.FSType, s.Data = bootstrap.MountFS, bootstrap.DestDir, "cgroup2", "cgroup2", m.Data
			return []bootstrap.MountStep{s}, nil
		}
		s.Flags |= unix.MS_BIND
		s.RecSet, s.RecClr = 0, 0 // as Go init's cgroupBind: not carried
		bindStep(cfg, &s, path.Join(rootfs.CgroupRoot, own[""]))
		return []bootstrap.MountStep{s}, nil
	}
	hierarchies := table.CgroupHierarchies()
	tmpfs := base
	tmpfs.Kind, tmpfs.Dest, tmpfs.Source, tmpfs.FSType = bootstrap.MountFS, bootstrap.DestDir, "tmpfs", "tmpfs"
	tmpfs.Flags &^= unix.MS_RDONLY
	tmpfs.Cleared, tmpfs.RecSet, tmpfs.RecClr, tmpfs.Propagation = 0, 0, 0, nil
	tmpfs.Data = rootfs.LabelledData(&configs.Mount{Device: "tmpfs", Data: "mode=755"}, cfg.MountLabel)
	tmpfs.Head = base.Head + ": tmpfs"
	if cfg.MountLabel != "" {
		tmpfs.Opts |= bootstrap.MountLabelled
	}
	steps := []bootstrap.MountStep{tmpfs}
	for _, h := range hierarchies {
		name := filepath.Base(h.Mountpoint)
		key, ok := rootfs.HierarchyKey(h, own)
		if !ok {
			return nil, fmt.Errorf("%s: not in /proc/self/cgroup (options %s)", h.Mountpoint, h.VFSOptions)
		}
		s := base
		s.Destination, s.Head, s.RecSet, s.RecClr, s.Propagation = path.Join(m.Destination, name), base.Head+": "+h.Mountpoint, 0, 0, nil
		if cgroupns {
			s.Kind, s.Dest, s.Source, s.FSType, s.Data, s.Cleared = bootstrap.MountFS, bootstrap.DestDir, "cgroup", h.FSType, key, 0
		} else {
			rel := own[key]
			if h.Root != "/" { // the host's own view is already scoped
				rel = strings.TrimPrefix(rel, h.Root)
			}
			s.Flags |= unix.MS_BIND
			bindStep(cfg, &s, path.Join(h.Mountpoint, rel))
		}
		steps = append(steps, s)
		if !strings.Contains(name, ",") {
			continue
		}
		for _, link := range strings.Split(name, ",") {
			steps = append(steps, bootstrap.MountStep{Index: base.Index, Kind: bootstrap.MountSymlink, Dest: bootstrap.DestDir, Fd: -1,
				Destination: m.Destination, Source: name, Data: link, Head: s.Head})
		}
	}
	last := base
	last.Kind, last.Dest = bootstrap.MountRemount, bootstrap.DestDir
	if m.Flags&unix.MS_RDONLY == 0 {
		last.Flags, last.Cleared = 0, 0 // only the attributes and the propagation
	}
	if last.Flags != 0 || last.Cleared != 0 || last.RecSet != 0 || last.RecClr != 0 || len(last.Propagation) > 0 {
		steps = append(steps, last)
	}
	return steps, nil
}
