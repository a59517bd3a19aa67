package rootfs

import (
	"errors"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// makeCwd makes a missing process.cwd in the rootfs (mode 0755, owned by
// the container's root), as runc and crun do, before the rootfs can be
// made read-only. It is resolved inside r as every mount destination is:
// a symlink in the rootfs cannot take it outside.
func makeCwd(r *rootDir, c *configs.Config) error {
	if c.Process == nil || c.Process.Cwd == "" {
		return nil
	}
	// Only a path that is missing is made: one that exists, or that
	// leads through a /proc magic link (process.cwd "/proc/self/fd/N",
	// CVE-2024-21626), is left to the launcher's chdir, which says
	// what is wrong with it.
	fd, err := openat2(r.fd, c.Process.Cwd, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
	if err == nil {
		closeFd(fd)
	}
	if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOSYS) {
		return nil // ENOSYS (before Linux 5.6): r.open alone keeps it inside
	}
	h, err := r.open(c.Process.Cwd, makeDir)
	if err != nil {
		return fmt.Errorf("process.cwd %q: make it in the rootfs: %w", c.Process.Cwd, err)
	}
	h.close()
	return nil
}

// makeCwdInRoot is makeCwd once "/" is the rootfs (a container without a
// mount namespace of its own, chrooted).
func makeCwdInRoot(c *configs.Config) error {
	r, err := openRoot("/")
	if err != nil {
		return fmt.Errorf("process.cwd: open the root: %w", err)
	}
	defer r.close()
	return makeCwd(r, c)
}
