package rootfs

import (
	"fmt"
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
	// Whatever is still shared (all of it with "shared", the mounts under
	// "/" with a non-recursive "private" or "slave"): the mount the rootfs
	// lies on must not be, else the bind below and every container mount
	// would propagate back into the host.
	if err := parentMountPrivate(root); err != nil {
		return fmt.Errorf("linux.rootfsPropagation: %w", err)
	}
	if err := mount(root, root, "bind", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("root.path %q: bind onto itself: %w", root, err)
	}
	return nil
}

// parentMountPrivate makes the mount that root lies on private if it is
// shared: pivot_root and MS_MOVE refuse a shared parent.
func parentMountPrivate(root string) error {
	mounts, err := mountinfo.GetMounts(mountinfo.ParentsFilter(root))
	if err != nil {
		return err
	}
	var parent *mountinfo.Info
	for _, m := range mounts { // later entries are stacked on earlier ones
		if parent == nil || len(m.Mountpoint) >= len(parent.Mountpoint) {
			parent = m
		}
	}
	if parent == nil || !strings.Contains(parent.Optional, "shared:") {
		return nil
	}
	if err := mount("", parent.Mountpoint, "", unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make parent mount %s private: %w", parent.Mountpoint, err)
	}
	return nil
}

// enterRoot makes the rootfs the process's "/".
func enterRoot(c *configs.Config, root string) error {
	if c.NoPivotRoot {
		if err := moveRoot(root); err != nil {
			return fmt.Errorf("--no-pivot: move %s to /: %w", root, err)
		}
		return nil
	}
	if err := pivotInto(root); err != nil {
		return fmt.Errorf("pivot_root to %s: %w", root, err)
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
func moveRoot(root string) error {
	if err := chdir(root); err != nil {
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
