package rootfs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// OpenSource opens src, the host path of a bind mount's source, as an
// O_PATH fd, in the calling thread's mount namespace, when the mount is
// reached: a source under the rootfs sees what earlier mounts made there
// (runc's mount order).
//
// A source under the rootfs (root, the config's root.path, or the path it
// resolves to) is the image's, and so an attacker's: it is resolved with
// the rootfs as "/" (openat2 RESOLVE_IN_ROOT), so no symlink in the image
// leads out of it, whatever it points to. Any other source is the host's,
// opened as given.
func OpenSource(root, src string) (int, error) {
	root, in, ok := sourceIn(root, src)
	if !ok {
		fd, err := unix.Open(src, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: src, Err: err}
		}
		return fd, nil
	}
	rootFd, err := open(root, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return -1, fmt.Errorf("open the rootfs %s: %w", root, err)
	}
	defer closeFd(rootFd)
	fd, err := openat2(rootFd, in, unix.O_PATH, unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return -1, fmt.Errorf("open %s inside the rootfs: %w", in, err)
	}
	return fd, nil
}

// SourceInRoot reports whether src, a bind mount's source, lies under the
// rootfs root (as given, or as it resolves), and where inside it: such a
// source is the image's, resolved with the rootfs as "/".
func SourceInRoot(root, src string) (string, bool) {
	_, in, ok := sourceIn(root, src)
	return in, ok
}

// sourceIn is SourceInRoot, with the root path src was found under.
func sourceIn(root, src string) (string, string, bool) {
	if in, ok := configs.UnderRoot(root, src); ok {
		return root, in, true
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		if in, ok := configs.UnderRoot(real, src); ok {
			return real, in, true
		}
	}
	return root, "", false
}
