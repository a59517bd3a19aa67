package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// setupDev fills a /dev that the config mounts as a tmpfs: the device nodes
// and the standard symlinks. A /dev from the image is left as it is.
func setupDev(r *rootDir, c *configs.Config) error {
	if !hasMount(c, "/dev", "tmpfs") {
		return nil
	}
	for i, d := range c.Devices {
		if err := createDevice(r, d); err != nil {
			return fmt.Errorf("devices[%d] %q: %w", i, d.Path, err)
		}
	}
	if err := devSymlinks(r, hasMount(c, "/dev/pts", "")); err != nil {
		return fmt.Errorf("/dev symlinks: %w", err)
	}
	return nil
}

// hasMount reports whether c mounts something at dest (of type fstype,
// unless fstype is "").
func hasMount(c *configs.Config, dest, fstype string) bool {
	for _, m := range c.Mounts {
		if filepath.Clean(m.Destination) == dest && (fstype == "" || m.Device == fstype) {
			return true
		}
	}
	return false
}

// createDevice makes d with mknod, owned and moded as asked. Where mknod is
// not permitted (a user namespace), the host's node is bound onto an empty
// file instead.
func createDevice(r *rootDir, d *configs.Device) error {
	mode, err := deviceMode(d)
	if err != nil {
		return err
	}
	dir, err := r.open(filepath.Dir(d.Path), makeDir)
	if err != nil {
		return err
	}
	defer dir.close()
	name := filepath.Base(d.Path)
	err = mknodat(dir.fd, name, mode, unix.Mkdev(uint32(d.Major), uint32(d.Minor)))
	switch {
	case errors.Is(err, unix.EEXIST):
		return nil
	case errors.Is(err, unix.EPERM):
		return bindDevice(r, d)
	case err != nil:
		return err
	}
	// mknod's mode went through the umask; set it exactly.
	if err := fchmodat(dir.fd, name, uint32(d.FileMode.Perm())); err != nil {
		return err
	}
	return fchownat(dir.fd, name, d.UID, d.GID)
}

// deviceMode is the mknod mode of d: its type bits and permissions.
func deviceMode(d *configs.Device) (uint32, error) {
	perm := uint32(d.FileMode.Perm())
	switch d.Type {
	case 'c', 'u':
		return unix.S_IFCHR | perm, nil
	case 'b':
		return unix.S_IFBLK | perm, nil
	case 'p':
		return unix.S_IFIFO | perm, nil
	}
	return 0, fmt.Errorf("unknown device type %q", d.Type)
}

// bindDevice binds the host's node at d.Path onto an empty file. Both ends
// are fds checked before the mount (CVE-2025-52881 class): the source, a
// clone of the host's node, must be the device d names (type, major,
// minor); the target, resolved without following symlinks, must be a
// regular file. Nothing is re-resolved by path after the check.
func bindDevice(r *rootDir, d *configs.Device) error {
	src, err := openTree(unix.AT_FDCWD, d.Path, unix.OPEN_TREE_CLONE)
	if err != nil {
		return fmt.Errorf("mknod not permitted, bind host %s: %w", d.Path, err)
	}
	defer closeFd(src)
	if err := checkDevice(src, d); err != nil {
		return fmt.Errorf("mknod not permitted, host %s: %w", d.Path, err)
	}
	dst, err := r.open(d.Path, makeFile)
	if err != nil {
		return err
	}
	defer dst.close()
	if st, err := fstat(dst.fd); err != nil {
		return err
	} else if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("bind target is not a regular file (mode %#o)", st.Mode)
	}
	if err := moveMount(src, dst.fd); err != nil {
		return fmt.Errorf("mknod not permitted, bind host %s: %w", d.Path, err)
	}
	return nil
}

// checkDevice fails unless fd is the device node d describes.
func checkDevice(fd int, d *configs.Device) error {
	st, err := fstat(fd)
	if err != nil {
		return err
	}
	want, err := deviceMode(d)
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != want&unix.S_IFMT ||
		unix.Major(st.Rdev) != uint32(d.Major) || unix.Minor(st.Rdev) != uint32(d.Minor) {
		return fmt.Errorf("is not the %c device %d:%d (mode %#o, device %d:%d)", d.Type, d.Major, d.Minor,
			st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	return nil
}

// devSymlinks makes /dev/fd, stdin, stdout, stderr, core (when the host has
// /proc/kcore) and ptmx (when devpts is mounted on /dev/pts).
func devSymlinks(r *rootDir, devpts bool) error {
	dev, err := r.open("/dev", mustExist)
	if err != nil {
		return err
	}
	defer dev.close()
	links := DevLinks(devpts)
	if devpts {
		if err := unlinkat(dev.fd, "ptmx"); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("ptmx: %w", err)
		}
	}
	for _, l := range links {
		if err := symlinkat(l[1], dev.fd, l[0]); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%s -> %s: %w", l[0], l[1], err)
		}
	}
	return nil
}

// DevLinks are the symlinks a /dev tmpfs gets, name -> target: /dev/fd,
// stdin, stdout, stderr, core (when the host has /proc/kcore) and, with
// devpts on /dev/pts, ptmx (replacing a ptmx there).
func DevLinks(devpts bool) [][2]string {
	links := [][2]string{
		{"fd", "/proc/self/fd"},
		{"stdin", "/proc/self/fd/0"},
		{"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"},
	}
	if _, err := os.Stat("/proc/kcore"); err == nil {
		links = append(links, [2]string{"core", "/proc/kcore"})
	}
	if devpts {
		links = append(links, [2]string{"ptmx", "pts/ptmx"})
	}
	return links
}
