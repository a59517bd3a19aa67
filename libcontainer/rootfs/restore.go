package rootfs

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Mountpoints makes, in the rootfs at c.Rootfs, the mount points CRIU
// needs when it restores the container's mounts: each destination not
// under a tmpfs (CRIU restores a tmpfs's content itself), a directory,
// or a file for a bind of a non-directory, resolved inside the rootfs as
// a create resolves it. A bind is mounted there meanwhile, in the
// caller's mount namespace, so that the mount points of the mounts inside
// it are made in its source, as a create makes them; they are unmounted
// before Mountpoints returns.
func Mountpoints(c *configs.Config) error {
	root, err := filepath.EvalSymlinks(c.Rootfs)
	if err != nil {
		return fmt.Errorf("rootfs %s: %w", c.Rootfs, err)
	}
	r, err := openRoot(root)
	if err != nil {
		return fmt.Errorf("rootfs %s: %w", c.Rootfs, err)
	}
	defer r.close()
	var bound []string
	defer func() {
		for i := len(bound) - 1; i >= 0; i-- {
			err := r.at(bound[i], func(p string) error { return unix.Unmount(p, unix.MNT_DETACH) })
			if err != nil {
				logrus.Warnf("restore: unmount %s in the rootfs: %v", bound[i], err)
			}
		}
	}()
	var tmpfs []string
	for _, m := range c.Mounts {
		if m.Device == "tmpfs" {
			tmpfs = append(tmpfs, filepath.Clean(m.Destination))
		}
	}
	for i, m := range c.Mounts {
		if m.Device == "cgroup" || underAny(m.Destination, tmpfs) {
			continue
		}
		if err := mountpoint(r, c.Rootfs, m, &bound); err != nil {
			return fmt.Errorf("mounts[%d] %s: restore's mount point: %w", i, m.Destination, err)
		}
	}
	return nil
}

// mountpoint makes m's destination; a bind's source is mounted there,
// and its destination appended to bound.
func mountpoint(r *rootDir, rootfs string, m *configs.Mount, bound *[]string) error {
	if m.Device != "bind" {
		h, err := r.open(m.Destination, makeDir)
		if err == nil {
			h.close()
		}
		return err
	}
	src, err := OpenSource(rootfs, m.Source)
	if err != nil {
		return err
	}
	defer closeFd(src)
	st, err := fstat(src)
	if err != nil {
		return err
	}
	h, err := r.open(m.Destination, destKind(st.Mode&unix.S_IFMT == unix.S_IFDIR))
	if err != nil {
		return err
	}
	defer h.close()
	if err := mount(procFd(src), h.proc(), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	*bound = append(*bound, m.Destination)
	return nil
}

// underAny reports whether p lies strictly below one of dirs.
func underAny(p string, dirs []string) bool {
	p = filepath.Clean(p)
	for _, d := range dirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
