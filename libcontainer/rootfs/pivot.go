package rootfs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// prepareRoot cuts the mount namespace off from the host's (recursively
// slave, or the asked rootfsPropagation), then binds the rootfs onto itself
// so that it is a mount point pivot_root and MS_MOVE can take.
func prepareRoot(c *configs.Config, root string) error {
	flags := unix.MS_SLAVE | unix.MS_REC
	if c.RootPropagation != 0 {
		flags = c.RootPropagation
	}
	if err := mount("", "/", "", flags, ""); err != nil {
		return fmt.Errorf("linux.rootfsPropagation %#x: set on /: %w", flags, err)
	}
	if err := isolateRoot(root, flags); err != nil {
		return fmt.Errorf("linux.rootfsPropagation: %w", err)
	}
	if err := mount(root, root, "bind", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("root.path %q: bind onto itself: %w", root, err)
	}
	return nil
}

// isolateRoot makes the mount the rootfs lies on private, as runc does, so
// that the bind onto itself and every container mount stay in this
// namespace, and neither pivot_root nor MS_MOVE meets a shared or
// unbindable parent; with rootfsPropagation "slave" or "rslave" it makes
// it a slave instead (runc's rootfsParentMountPropagation), so the
// container's "/" stays a slave of the host's mount. When the rootfs is
// itself a shared mount point, it becomes a slave with "shared" or
// "slave" asked (what the host mounts under it still shows inside,
// nothing goes back) and private otherwise.
func isolateRoot(root string, flags int) error {
	mounts, err := mountTable(mountinfo.ParentsFilter(root))
	if err != nil {
		return err
	}
	shared := func(m *mountinfo.Info) bool { return strings.Contains(m.Optional, "shared:") }
	for _, p := range IsolatePoints(mounts, root, flags, shared) {
		if err := mount("", p.Mountpoint, "", p.Flags, ""); err != nil {
			return fmt.Errorf("make mount %s %s: %w", p.Mountpoint, propagationName(p.Flags), err)
		}
	}
	return nil
}

// IsolatePoint is a mount point isolateRoot changes, and to what
// (MS_PRIVATE or MS_SLAVE).
type IsolatePoint struct {
	Mountpoint string
	Flags      int
}

// IsolatePoints is what isolateRoot changes, in order: of mounts (the
// mount table's entries at root and its parents), the rootfs itself when
// it is a shared mount point (shared says so of a mount, after "/" got
// the rootfsPropagation flags), then the deepest parent mount.
func IsolatePoints(mounts []*mountinfo.Info, root string, flags int, shared func(*mountinfo.Info) bool) []IsolatePoint {
	// Of mounts stacked on one point the last listed is on top; deepest first.
	top := map[string]*mountinfo.Info{}
	for _, m := range mounts {
		top[m.Mountpoint] = m
	}
	points := slices.SortedFunc(maps.Keys(top), func(a, b string) int { return len(b) - len(a) })
	var out []IsolatePoint
	for _, p := range points {
		m, self := top[p], p == root
		want := unix.MS_PRIVATE
		switch {
		case self && !shared(m):
			continue
		case self && flags&(unix.MS_SHARED|unix.MS_SLAVE) != 0:
			want = unix.MS_SLAVE
		case !self && flags&unix.MS_SLAVE != 0:
			want = unix.MS_SLAVE
		}
		out = append(out, IsolatePoint{p, want})
		if !self {
			break
		}
	}
	return out
}

func propagationName(flags int) string {
	if flags&unix.MS_SLAVE != 0 {
		return "slave"
	}
	return "private"
}

// enterRoot makes the rootfs the process's "/", then gives it the asked
// rootfsPropagation: only now, as "/", so that "shared" cannot reach the
// host (runc does the same; "private" is already so).
func enterRoot(c *configs.Config, root string) error {
	if c.NoPivotRoot {
		if err := moveRoot(root); err != nil {
			return fmt.Errorf("--no-pivot: move %s to /: %w", root, err)
		}
	} else if err := pivotInto(root); err != nil {
		return fmt.Errorf("pivot_root to %s: %w", root, err)
	}
	if p := c.RootPropagation; p != 0 && p&unix.MS_PRIVATE == 0 {
		if err := mount("", "/", "", p, ""); err != nil {
			return fmt.Errorf("linux.rootfsPropagation %#x: set on the new /: %w", p, err)
		}
	}
	return nil
}

// pivotInto swaps the rootfs in as "/" with pivot_root(".", "."), which
// stacks the old root on top of the new one with no directory to put it in,
// then detaches the old root.
func pivotInto(root string) error {
	oldRoot, err := open("/", unix.O_DIRECTORY|unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer closeFd(oldRoot)
	newRoot, err := open(root, unix.O_DIRECTORY|unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer closeFd(newRoot)
	if err := fchdir(newRoot); err != nil {
		return err
	}
	if err := pivotRoot(".", "."); err != nil {
		return err
	}
	if err := fchdir(oldRoot); err != nil {
		return err
	}
	// Slave first, so the detach below cannot propagate to the host.
	if err := mount("", ".", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("old root: %w", err)
	}
	if err := umount2(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("old root: %w", err)
	}
	return chdir("/")
}

// moveRoot is --no-pivot: move the rootfs mount onto "/" and chroot into it.
// The old root stays underneath, hidden; it cannot be unmounted this way.
// Its proc and sysfs mounts are taken away first: while a whole proc stays
// anywhere in the namespace, the kernel lets a nested user namespace mount
// a fresh proc, without the container's masks.
func moveRoot(root string) error {
	if err := hideHostProcSys(root); err != nil {
		return err
	}
	if err := chdir(root); err != nil {
		return err
	}
	// "/" private first: the move must not propagate to the host.
	if err := mount("", "/", "", unix.MS_PRIVATE, ""); err != nil {
		return err
	}
	if err := mount(root, "/", "", unix.MS_MOVE, ""); err != nil {
		return err
	}
	if err := chroot("."); err != nil {
		return err
	}
	return chdir("/")
}

// hideHostProcSys detaches every whole proc and sysfs mount outside the
// rootfs; one that cannot be detached is covered with an empty tmpfs.
func hideHostProcSys(root string) error {
	mounts, err := HostProcSys(root)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		p := m.Mountpoint
		// Slave first, so the detach cannot propagate to the host.
		if err := mount("", p, "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
				continue // already gone with a detached parent
			}
			return fmt.Errorf("host %s %s: %w", m.FSType, p, err)
		}
		err := umount2(p, unix.MNT_DETACH)
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) {
			err = mount("tmpfs", p, "tmpfs", unix.MS_RDONLY, "")
		}
		if err != nil {
			return fmt.Errorf("hide host %s %s: %w", m.FSType, p, err)
		}
	}
	return nil
}

// HostProcSys are the whole proc and sysfs mounts outside the rootfs
// root, deepest first: what --no-pivot takes away before it moves the
// rootfs onto "/".
func HostProcSys(root string) ([]*mountinfo.Info, error) {
	t, err := ReadMounts()
	return t.HostProcSys(root), err
}

// HostProcSys is HostProcSys of the table t.
func (t Mounts) HostProcSys(root string) []*mountinfo.Info {
	mounts := t.filter(func(m *mountinfo.Info) (bool, bool) {
		whole := m.Root == "/" && (m.FSType == "proc" || m.FSType == "sysfs")
		inside := m.Mountpoint == root || strings.HasPrefix(m.Mountpoint, root+"/")
		return !whole || inside, false
	})
	slices.SortFunc(mounts, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	return mounts
}

// chrootRoot makes root the process's "/" without a mount namespace of
// its own: chroot, as runc does. Nothing is mounted, moved or made
// private, not even with --no-pivot: every mount would change the host's
// own tree.
//
// The host's /proc is kept open (hostProc): init still reopens fds through
// procfs (ReopenFd), and this root has no /proc of its own.
func chrootRoot(root string) error {
	proc, err := openProc()
	if err != nil {
		return fmt.Errorf("without a mount namespace: the host's %w", err)
	}
	hostProc = proc
	fd, err := open(root, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return fmt.Errorf("root.path %q: %w", root, err)
	}
	defer closeFd(fd)
	if err := fchdir(fd); err != nil {
		return fmt.Errorf("root.path %q: %w", root, err)
	}
	if err := chroot("."); err != nil {
		return fmt.Errorf("root.path %q: without a mount namespace: %w", root, err)
	}
	return chdir("/")
}
