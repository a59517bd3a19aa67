package rootfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// A {"type": "cgroup"} mount shows the container its own cgroups. With a
// cgroup namespace the kernel scopes a fresh cgroup mount to it; without
// one, the container's own directories of the host's hierarchies are bound
// instead, so it never sees its neighbours.

const cgroupRoot = "/sys/fs/cgroup"

func mountCgroup(r *rootDir, c *configs.Config, m *configs.Mount) error {
	own, err := ownCgroups()
	if err != nil {
		return err
	}
	_, cgroupns := c.Namespace(configs.NEWCGROUP)
	if CgroupV2() {
		return mountCgroup2(r, m, cgroupns, own[""])
	}
	return mountCgroup1(r, m, cgroupns, own)
}

// mountCgroup2 mounts the unified hierarchy at m.Destination.
func mountCgroup2(r *rootDir, m *configs.Mount, cgroupns bool, own string) error {
	if !cgroupns {
		b := cgroupBind(m, m.Destination, path.Join(cgroupRoot, own))
		b.PropagationFlags = m.PropagationFlags
		return bindMount(r, b)
	}
	// No fallback to a bind here: inside the cgroup namespace, own is "/".
	err := r.mountAt(m.Destination, makeDir, "cgroup2", "cgroup2", m.Flags, m.Data)
	if errors.Is(err, unix.EBUSY) {
		err = mountCgroup2OverItself(r, m)
	}
	if err != nil {
		return err
	}
	return finishMount(r, m)
}

// mountCgroup2OverItself mounts cgroup2 where the destination already is
// a mount of it (the rootless spec binds the host's /sys with its
// /sys/fs/cgroup): the kernel refuses a filesystem on top of its own root
// (EBUSY), so an empty read-only tmpfs goes in between.
func mountCgroup2OverItself(r *rootDir, m *configs.Mount) error {
	dst, err := r.open(m.Destination, makeDir)
	if err != nil {
		return err
	}
	err = r.mountLabelled("tmpfs", dst.proc(), "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k")
	dst.close()
	if err != nil {
		return fmt.Errorf("tmpfs under cgroup2 on %s: %w", m.Destination, err)
	}
	if dst, err = r.open(m.Destination, makeDir); err != nil {
		return err
	}
	defer dst.close()
	return mount("cgroup2", dst.proc(), "cgroup2", m.Flags, m.Data)
}

// mountCgroup1 makes a tmpfs at m.Destination holding one directory per
// host hierarchy (cpu, memory, ..., unified), each a cgroup mount or a bind.
func mountCgroup1(r *rootDir, m *configs.Mount, cgroupns bool, own map[string]string) error {
	hierarchies, err := CgroupHierarchies()
	if err != nil {
		return err
	}
	if err := r.mountAt(m.Destination, makeDir, "tmpfs", "tmpfs", m.Flags&^unix.MS_RDONLY, r.labelled("mode=755")); err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	for _, h := range hierarchies {
		if err := mountHierarchy(r, m, h, cgroupns, own); err != nil {
			return fmt.Errorf("%s: %w", h.Mountpoint, err)
		}
	}
	if m.Flags&unix.MS_RDONLY != 0 {
		if err := r.at(m.Destination, func(p string) error { return remountBind(p, m.Flags, m.ClearedFlags) }); err != nil {
			return err
		}
	}
	return finishMount(r, m)
}

// mountHierarchy mounts the host hierarchy h under m.Destination, by its
// base name, plus a symlink per controller of a co-mounted one (cpu ->
// cpu,cpuacct).
func mountHierarchy(r *rootDir, m *configs.Mount, h *mountinfo.Info, cgroupns bool, own map[string]string) error {
	name := filepath.Base(h.Mountpoint)
	dest := path.Join(m.Destination, name)
	key, ok := hierarchyKey(h, own)
	if !ok {
		return fmt.Errorf("not in /proc/self/cgroup (options %s)", h.VFSOptions)
	}
	if cgroupns {
		if err := r.mountAt(dest, makeDir, "cgroup", h.FSType, m.Flags, key); err != nil {
			return err
		}
	} else {
		rel := own[key]
		if h.Root != "/" { // the host's own view is already scoped
			rel = strings.TrimPrefix(rel, h.Root)
		}
		if err := bindMount(r, cgroupBind(m, dest, path.Join(h.Mountpoint, rel))); err != nil {
			return err
		}
	}
	if !strings.Contains(name, ",") {
		return nil
	}
	dir, err := r.open(m.Destination, mustExist)
	if err != nil {
		return err
	}
	defer dir.close()
	for _, link := range strings.Split(name, ",") {
		if err := symlinkat(name, dir.fd, link); err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
	}
	return nil
}

// hierarchyKey is how /proc/self/cgroup names hierarchy h: "" for
// cgroup2, else the controllers of the line ("cpu,cpuacct", "name=systemd")
// that are all among h's superblock options.
func hierarchyKey(h *mountinfo.Info, own map[string]string) (string, bool) {
	if h.FSType == "cgroup2" {
		_, ok := own[""]
		return "", ok
	}
	opts := strings.Split(h.VFSOptions, ",")
	for key := range own {
		if key != "" && allIn(strings.Split(key, ","), opts) {
			return key, true
		}
	}
	return "", false
}

func allIn(items, set []string) bool {
	for _, item := range items {
		if !slices.Contains(set, item) {
			return false
		}
	}
	return true
}

// cgroupBind is m as a bind of the host directory src at dest.
func cgroupBind(m *configs.Mount, dest, src string) *configs.Mount {
	return &configs.Mount{
		Source:       src,
		Destination:  dest,
		Device:       "bind",
		Flags:        m.Flags | unix.MS_BIND,
		ClearedFlags: m.ClearedFlags,
	}
}

// CgroupV2 reports whether /sys/fs/cgroup is the unified hierarchy.
func CgroupV2() bool {
	st, err := statfs(cgroupRoot)
	return err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// CgroupHierarchies are the cgroup hierarchies mounted right under
// /sys/fs/cgroup (cgroup v1, and a v2 "unified" beside them).
func CgroupHierarchies() ([]*mountinfo.Info, error) {
	t, err := ReadMounts()
	return t.CgroupHierarchies(), err
}

// CgroupHierarchies is CgroupHierarchies of the table t.
func (t Mounts) CgroupHierarchies() []*mountinfo.Info {
	return t.filter(func(i *mountinfo.Info) (bool, bool) {
		isCgroup := i.FSType == "cgroup" || i.FSType == "cgroup2"
		return !isCgroup || filepath.Dir(i.Mountpoint) != cgroupRoot, false
	})
}

// ownCgroups reads /proc/self/cgroup: controllers ("" for cgroup2) -> path.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseOwnCgroups(f)
}

// ParseOwnCgroups reads a /proc/PID/cgroup: controllers ("" for cgroup2)
// -> path.
func ParseOwnCgroups(r io.Reader) (map[string]string, error) {
	own := map[string]string{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		// hierarchy-ID:controllers:path
		fields := strings.SplitN(s.Text(), ":", 3)
		if len(fields) == 3 {
			own[fields[1]] = fields[2]
		}
	}
	return own, s.Err()
}
