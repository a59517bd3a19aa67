// Package rootfs builds the container's filesystem view from inside `husk
// init`: in the container's new mount namespace, as root, before privileges
// are dropped.
//
// Setup does everything that needs the host's paths (config.json mounts
// resolved safely inside the rootfs, /dev, pivot_root); Finalize runs inside
// the new root afterwards (masked and read-only paths, read-only "/").
//
// Every error names the config.json entry it comes from, e.g.
//
//	mounts[3] (proc on /proc): mount: operation not permitted
//	maskedPaths[2] "/proc/kcore": mount: no such device
package rootfs

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// Setup mounts the container's filesystems under c.Rootfs and makes it the
// process's root. The calling thread must be in the container's new mount
// namespace (c must say so) and stay locked to it.
func Setup(c *configs.Config) error { return SetupWith(c, nil) }

// SetupWith is Setup calling beforePivot, when not nil, once everything is
// mounted and before the rootfs becomes "/": where the runtime-spec runs
// the createRuntime and createContainer hooks.
func SetupWith(c *configs.Config, beforePivot func() error) error {
	if !c.NewNamespace(configs.NEWNS) {
		return errors.New("linux.namespaces: building the rootfs needs a new mount namespace")
	}
	root, err := filepath.EvalSymlinks(c.Rootfs)
	if err != nil {
		return fmt.Errorf("root.path: %w", err)
	}
	if err := prepareRoot(c, root); err != nil {
		return err
	}
	r, err := openRoot(root)
	if err != nil {
		return fmt.Errorf("root.path %q: %w", root, err)
	}
	err = mountAll(r, c)
	if err == nil {
		err = setupDev(r, c)
	}
	r.close()
	if err == nil {
		err = openDevNull(c) // while "/" is still the host's
	}
	if err == nil && beforePivot != nil {
		err = beforePivot()
	}
	if err != nil {
		return err
	}
	return enterRoot(c, root)
}

// Finalize runs inside the new root, after Setup and the hostname: it masks
// c.MaskPaths, makes c.ReadonlyPaths read-only and, with c.Readonlyfs, "/".
func Finalize(c *configs.Config) error {
	if err := maskPaths(c.MaskPaths); err != nil {
		return err
	}
	if err := readonlyPaths(c.ReadonlyPaths); err != nil {
		return err
	}
	if c.Readonlyfs {
		if err := remountBind("/", unix.MS_RDONLY, 0); err != nil {
			return fmt.Errorf("root.readonly: remount / read-only: %w", err)
		}
	}
	return nil
}
