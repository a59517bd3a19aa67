// Package rootfs builds the container's filesystem view from inside `husk
// init`: in the container's new mount namespace, as root, before privileges
// are dropped.
//
// SetupWith does everything that needs the host's paths (config.json mounts
// resolved safely inside the rootfs, /dev, pivot_root); the launcher, pid 1,
// finishes it inside the new root (masked and read-only paths, read-only
// /dev and "/": nsenter/final.c).
//
// Every error names the config.json entry it comes from, e.g.
//
//	mounts[3]: error mounting "proc" to rootfs at "/proc": mount: operation not permitted
package rootfs

import (
	"fmt"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// SetupWith mounts the container's filesystems under c.Rootfs and makes it
// the process's root, calling beforePivot, when not nil, once everything
// is mounted and before the rootfs becomes "/": where the runtime-spec
// runs the createRuntime and createContainer hooks. The calling thread must
// be in the container's mount namespace, new or joined, and stay locked to
// it. Without a mount namespace of its own the container shares the
// host's: nothing is mounted, the hooks run, then the process is
// chrooted into root.path, as runc does (chrootRoot).
//
// openSource, when not nil, gets the fd of mounts[i]'s source for each bind
// mount the parent must open (configs.Config.SourceOutside); the fd is
// closed once mounted.
func SetupWith(c *configs.Config, beforePivot func() error, openSource SourceOpener) error {
	if _, ok := c.Namespace(configs.NEWNS); !ok {
		if err := runHook(beforePivot); err != nil {
			return err
		}
		if err := chrootRoot(c.Rootfs); err != nil {
			return err
		}
		return makeCwdInRoot(c)
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
	r.given, r.openSource, r.mountLabel = c.Rootfs, openSource, c.MountLabel
	err = buildRoot(r, c)
	r.close()
	if err == nil {
		err = openDevNull(c) // while "/" is still the host's
	}
	if err == nil {
		err = runHook(beforePivot)
	}
	if err != nil {
		return err
	}
	return enterRoot(c, root)
}

// buildRoot makes every mount, then /dev's nodes and links, then a
// missing process.cwd.
func buildRoot(r *rootDir, c *configs.Config) error {
	if err := mountAll(r, c); err != nil {
		return err
	}
	if err := setupDev(r, c); err != nil {
		return err
	}
	return makeCwd(r, c)
}

func runHook(hook func() error) error {
	if hook == nil {
		return nil
	}
	return hook()
}
