package rootfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// maskPath hides p: /dev/null over a file, an empty read-only tmpfs over a
// directory. A path that does not exist needs no mask.
func maskPath(p string) error {
	err := mount("/dev/null", p, "", unix.MS_BIND, "")
	switch {
	case errors.Is(err, unix.ENOTDIR): // p is a directory
		return mount("tmpfs", p, "tmpfs", unix.MS_RDONLY, "")
	case errors.Is(err, unix.ENOENT):
		if _, serr := os.Lstat(p); errors.Is(serr, os.ErrNotExist) {
			return nil
		}
	}
	return err // nil, or ENOENT of a missing /dev/null
}

// readonlyPath binds p onto itself and remounts it read-only, keeping its
// other locked flags. A path that does not exist is skipped.
func readonlyPath(p string) error {
	if err := mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	return remountBind(p, unix.MS_RDONLY, 0)
}
