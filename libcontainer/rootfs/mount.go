package rootfs

import (
	"errors"
	"fmt"
	"path/filepath"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// mountAll mounts every config.json mount inside the rootfs, in order. A
// read-only /dev is mounted writable and made read-only by pid 1
// (nsenter/final.c), once its submounts, device nodes and the console are there.
func mountAll(r *rootDir, c *configs.Config) error {
	for i, m := range c.Mounts {
		if isReadonlyDev(m) {
			rw := *m
			rw.Flags &^= unix.MS_RDONLY
			m = &rw
		}
		if err := mountOne(r, c, m, i); err != nil {
			return mountError(i, m, err)
		}
		if err := r.coverRoot(m.Destination); err != nil {
			return mountError(i, m, err)
		}
	}
	return nil
}

// mountError names mounts[i] in runc's words ("error mounting SRC to
// rootfs at DST"), which scripts look for, then says what went wrong.
func mountError(i int, m *configs.Mount, err error) error {
	return fmt.Errorf("%s: %w", MountErrorHead(i, m), err)
}

// MountErrorHead is what an error of mounts[i] starts with.
func MountErrorHead(i int, m *configs.Mount) string {
	return fmt.Sprintf("mounts[%d]: error mounting %q to rootfs at %q", i, mountSource(m), m.Destination)
}

// isReadonlyDev reports whether m is a read-only filesystem on /dev.
func isReadonlyDev(m *configs.Mount) bool {
	return filepath.Clean(m.Destination) == "/dev" && m.Flags&unix.MS_RDONLY != 0 && !m.IsBind()
}

// ReadonlyDev names the read-only /dev mount in config.json, as errors
// name it ("mounts[3]: error mounting ..."), for pid 1, which makes it
// read-only once its submounts, device nodes and the console are there
// (nsenter/final.c); "" when /dev is not one.
func ReadonlyDev(c *configs.Config) string {
	for i, m := range c.Mounts {
		if isReadonlyDev(m) {
			return MountErrorHead(i, m)
		}
	}
	return ""
}

// mountOne mounts m at its destination, resolved inside the rootfs, then
// applies its propagation flags.
func mountOne(r *rootDir, c *configs.Config, m *configs.Mount, i int) error {
	if err := checkProcDest(r, m); err != nil {
		return err
	}
	switch {
	case c.SourceOutside(m) && r.openSource != nil:
		return bindOutside(r, m, i)
	case m.IsBind() || m.Device == "bind":
		return bindMount(r, m)
	case m.Device == "cgroup":
		return mountCgroup(r, c, m)
	case m.Device == "tmpfs":
		return mountTmpfs(r, m)
	}
	kind, data := makeDir, LabelledData(m, r.mountLabel)
	if m.Device == "proc" || m.Device == "sysfs" {
		kind = realDir
	}
	err := r.mountAt(m.Destination, kind, mountSource(m), m.Device, m.Flags, data)
	if errors.Is(err, unix.EPERM) {
		if host := hostFallback(c, m); host != "" {
			if err := bindMount(r, fallbackBind(m, host)); err != nil {
				return fmt.Errorf("%s not permitted, bind host %s instead: %w", m.Device, host, err)
			}
			return nil
		}
	}
	if err != nil {
		if data != m.Data {
			return fmt.Errorf("data %q (linux.mountLabel): %w", data, err)
		}
		return err
	}
	if LabelsRoot(m) {
		if err := r.labelRoot(m.Destination); err != nil {
			return err
		}
	}
	return finishMount(r, m)
}

// checkProcDest refuses m when its destination, its symlinks resolved
// inside the rootfs, lies inside /proc (configs.CheckProcMount): the
// config's path was checked as written, this is where it leads.
func checkProcDest(r *rootDir, m *configs.Mount) error {
	dest, err := resolvedDest(r, m)
	if err != nil {
		return err
	}
	return configs.CheckProcMount(dest, m.Device, m.IsBind() || m.Device == "bind")
}

// resolvedDest is m's destination, its symlinks resolved inside the
// rootfs, as a container path.
func resolvedDest(r *rootDir, m *configs.Mount) (string, error) {
	joined, err := securejoin.SecureJoin(r.path, m.Destination)
	if err != nil {
		return "", fmt.Errorf("resolve %q in rootfs: %w", m.Destination, err)
	}
	dest, _ := configs.UnderRoot(r.path, joined)
	return dest, nil
}

// checkProcSource refuses a bind on /proc whose source src is not a
// procfs, as runc does: a directory of the host's or the image's would
// be the /proc the container's tools and pid 1 trust.
func checkProcSource(r *rootDir, m *configs.Mount, src int) error {
	dest, err := resolvedDest(r, m)
	if err != nil || dest != "/proc" {
		return err
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(src, &fs); err != nil {
		return fmt.Errorf("statfs the source of the bind on /proc: %w", err)
	}
	if fs.Type != unix.PROC_SUPER_MAGIC {
		return fmt.Errorf("%q cannot be mounted because it is not of type proc (the bind's source is not a procfs)", dest)
	}
	return nil
}

// mountSource is the mount's source, or its type when it has none.
func mountSource(m *configs.Mount) string {
	if m.Source == "" {
		return m.Device
	}
	return m.Source
}

// hostFallback is the host directory to bind instead of a filesystem the
// kernel refused to mount, or "". A sysfs belongs to a network namespace
// and an mqueue to an IPC namespace: from a user namespace without a new one
// of those the kernel says EPERM, and runc binds the host's instead.
func hostFallback(c *configs.Config, m *configs.Mount) string {
	switch {
	case m.Device == "sysfs" && !c.NewNamespace(configs.NEWNET):
		return "/sys"
	case m.Device == "mqueue" && !c.NewNamespace(configs.NEWIPC):
		return "/dev/mqueue"
	}
	return ""
}

// fallbackBind is m as a recursive bind of the host directory src, keeping
// m's flags (ro, nosuid, ...) for the remount.
func fallbackBind(m *configs.Mount, src string) *configs.Mount {
	b := *m
	b.Source = src
	b.Device = "bind"
	b.Flags = m.Flags | unix.MS_BIND | unix.MS_REC
	b.Data = ""
	return &b
}

// finishMount applies what comes after the mount itself: the recursive
// attributes ("rro", ...), then the propagation.
func finishMount(r *rootDir, m *configs.Mount) error {
	if err := setRecursiveAttrs(r, m); err != nil {
		return err
	}
	return propagate(r, m)
}

// setRecursiveAttrs sets and clears m's MOUNT_ATTR_* bits on the mount at
// its destination and on every mount under it.
func setRecursiveAttrs(r *rootDir, m *configs.Mount) error {
	if m.RecAttrSet == 0 && m.RecAttrClr == 0 {
		return nil
	}
	dst, err := r.open(m.Destination, mustExist)
	if err != nil {
		return err
	}
	defer dst.close()
	attr := &unix.MountAttr{Attr_set: m.RecAttrSet, Attr_clr: m.RecAttrClr}
	if err := mountSetattr(dst.fd, unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("set recursive attributes (set %#x, clear %#x): %w", m.RecAttrSet, m.RecAttrClr, err)
	}
	return nil
}

// propagate applies m's propagation flags, one after the other.
func propagate(r *rootDir, m *configs.Mount) error {
	if len(m.PropagationFlags) == 0 {
		return nil
	}
	return r.at(m.Destination, func(p string) error {
		for _, flags := range m.PropagationFlags {
			if err := mount("", p, "", flags, ""); err != nil {
				return fmt.Errorf("set propagation %#x: %w", flags, err)
			}
		}
		return nil
	})
}
