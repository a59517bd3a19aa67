package rootfs

// Masked and read-only paths (config.json linux.maskedPaths and
// linux.readonlyPaths), applied inside the new root.
//
// Everything under the new root belongs to the image, and so to an
// attacker (CVE-2025-31133, CVE-2025-52881): its /dev/null may be a
// symlink to a /proc/sys file, turning "mask /proc/timer_list" into a
// writable host sysctl; a masked path may be a symlink to anything. So no
// path is handed to mount(2) here. Each target is opened once, as an
// O_PATH fd, by openat2 with RESOLVE_NO_SYMLINKS, and checked: its type,
// and its filesystem (procfs under /proc, sysfs under /sys). The mask is
// then attached onto that very fd with move_mount.
//
// What masks a file is the container's own /dev/null when it is checked
// to be char 1:3 (reached without a symlink, on a mount allowing devices),
// else the host's, cloned by openDevNull before pivot_root, when "/" is
// still the host's, and checked the same way.
// What masks a directory is one read-only tmpfs, made with fsopen and
// shared by all masked directories, as runc does: one superblock, not one
// per path (on nodes with many per-CPU masked paths, tmpfs superblocks
// contend).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// devNull is a detached mount of the host's /dev/null (open_tree clone),
// made by openDevNull before pivot_root and used by maskPaths after it.
// init builds one container, so one is enough; -1 when there is none.
var devNull = -1

// openDevNull clones the host's /dev/null as a detached mount, for
// masking files once the image's /dev is all there is. Called before
// pivot_root, with the host's "/" still the process's root.
func openDevNull(c *configs.Config) error {
	if len(c.MaskPaths) == 0 || devNull >= 0 {
		return nil
	}
	fd, err := openTree(unix.AT_FDCWD, "/dev/null", unix.OPEN_TREE_CLONE)
	if err != nil {
		return fmt.Errorf("maskedPaths: clone the host's /dev/null: %w", err)
	}
	if err := checkDevNull(fd); err != nil {
		closeFd(fd)
		return fmt.Errorf("maskedPaths: the host's /dev/null: %w", err)
	}
	devNull = fd
	return nil
}

// checkDevNull fails unless fd is the character device 1:3.
func checkDevNull(fd int) error {
	st, err := fstat(fd)
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
		return fmt.Errorf("not the character device 1:3 (mode %#o, device %d:%d)",
			st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	return nil
}

// maskPaths masks each of paths once (a path listed twice is masked
// once): a file under the host's /dev/null, a directory under the shared
// read-only tmpfs. A path that does not exist, or is a dangling symlink,
// is skipped, as runc does.
func maskPaths(paths []string, mountLabel string) error {
	if len(paths) == 0 {
		return nil
	}
	m := &masks{file: mountSrc{fd: containerDevNull()}, dir: mountSrc{fd: -1}, label: mountLabel}
	if m.file.fd >= 0 {
		closeFd(devNull)
	} else {
		m.file.fd = devNull
	}
	devNull = -1 // m owns it now
	defer m.close()
	seen := map[string]bool{}
	for i, p := range paths {
		clean := filepath.Clean(p)
		if seen[clean] {
			continue
		}
		seen[clean] = true
		if err := m.mask(clean); err != nil {
			return fmt.Errorf("maskedPaths[%d] %q: %w", i, p, err)
		}
	}
	return nil
}

// containerDevNull is a detached clone of the container's own /dev/null
// (as runc masks with, so /proc/mounts reads the same), or -1 when that is
// not the character device 1:3 reached without a symlink, on a mount that
// allows devices: then the host's clone (openDevNull) masks instead. The
// clone is made from the fd that was checked, never from the path again.
func containerDevNull() int {
	fd, err := openat2(unix.AT_FDCWD, "/dev/null", unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, unix.RESOLVE_NO_SYMLINKS)
	if err != nil {
		return -1
	}
	defer closeFd(fd)
	if checkDevNull(fd) != nil {
		return -1
	}
	if st, err := fstatfs(fd); err != nil || st.Flags&unix.ST_NODEV != 0 {
		return -1
	}
	clone, err := openTree(fd, "", unix.OPEN_TREE_CLONE|unix.AT_EMPTY_PATH)
	if err != nil || checkDevNull(clone) != nil {
		if clone >= 0 {
			closeFd(clone)
		}
		return -1
	}
	return clone
}

// masks holds what masks files and directories.
type masks struct {
	file, dir mountSrc
	label     string // linux.mountLabel, for the directories' tmpfs
}

func (m *masks) close() {
	m.file.close()
	m.dir.close()
}

func (m *masks) mask(p string) error {
	t, err := openTarget(p)
	if t < 0 || err != nil {
		return err
	}
	defer closeFd(t)
	st, err := fstat(t)
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if m.dir.fd < 0 {
			if m.dir.fd, err = newMaskTmpfs(m.label); err != nil {
				return err
			}
		}
		return m.dir.attach(t)
	}
	if m.file.fd < 0 {
		return errors.New("no /dev/null to mask it with (the host's was not cloned before pivot_root)")
	}
	return m.file.attach(t)
}

// mountSrc is a mount to attach onto targets: the first attach moves the
// detached mount itself; once it is attached, each further attach moves
// a clone of it (the kernel clones only mounts of the caller's namespace).
type mountSrc struct {
	fd       int
	attached bool
}

func (s *mountSrc) attach(target int) error {
	if !s.attached {
		if err := moveMount(s.fd, target); err != nil {
			return err
		}
		s.attached = true
		return nil
	}
	clone, err := openTree(s.fd, "", unix.OPEN_TREE_CLONE|unix.AT_EMPTY_PATH)
	if err != nil {
		return err
	}
	defer closeFd(clone)
	return moveMount(clone, target)
}

func (s *mountSrc) close() {
	if s.fd >= 0 {
		closeFd(s.fd)
		s.fd = -1
	}
}

// newMaskTmpfs makes the empty, read-only tmpfs that masks directories,
// as a detached mount, with the mount label as its context (runc's
// maskDir).
func newMaskTmpfs(mountLabel string) (int, error) {
	fs, err := fsopen("tmpfs")
	if err != nil {
		return -1, err
	}
	defer closeFd(fs)
	// Named and flagged as runc's (read-only tmpfs "tmpfs"): /proc/mounts
	// reads the same under both runtimes.
	if err := unix.FsconfigSetString(fs, "source", "tmpfs"); err != nil {
		return -1, os.NewSyscallError("fsconfig source", err)
	}
	if mountLabel != "" {
		if err := unix.FsconfigSetString(fs, "context", mountLabel); err != nil {
			return -1, fmt.Errorf("linux.mountLabel %q: %w", mountLabel, os.NewSyscallError("fsconfig context", err))
		}
	}
	if err := fsconfigCreate(fs); err != nil {
		return -1, err
	}
	return fsmount(fs, unix.MOUNT_ATTR_RDONLY)
}

// readonlyPaths makes each of paths read-only: a recursive clone of the
// tree at the path, made read-only (its other flags, locked or not, kept),
// attached back onto it. A path that does not exist is skipped.
func readonlyPaths(paths []string) error {
	for i, p := range paths {
		if err := readonlyPath(filepath.Clean(p)); err != nil {
			return fmt.Errorf("readonlyPaths[%d] %q: %w", i, p, err)
		}
	}
	return nil
}

// readonlyMount makes the mount at p (no symlink in p) read-only: that
// mount alone, its other attributes kept. Nothing there: nothing to do.
func readonlyMount(p string) error {
	t, err := openTarget(p)
	if t < 0 || err != nil {
		return err
	}
	defer closeFd(t)
	return mountSetattr(t, unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
}

func readonlyPath(p string) error {
	t, err := openTarget(p)
	if t < 0 || err != nil {
		return err
	}
	defer closeFd(t)
	clone, err := openTree(t, "", unix.OPEN_TREE_CLONE|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return err
	}
	defer closeFd(clone)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := mountSetattr(clone, unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
		return err
	}
	return moveMount(clone, t)
}

// openTarget opens the path p of the container's root as an O_PATH fd
// without following any symlink, and checks it is on the filesystem it
// must be on. It returns -1 and no error when p does not exist or is a
// dangling symlink: there is nothing to protect. A symlink anywhere in p
// that leads somewhere is an error: husk never mounts through one.
func openTarget(p string) (int, error) {
	if !filepath.IsAbs(p) {
		return -1, fmt.Errorf("not an absolute path")
	}
	fd, err := openat2(unix.AT_FDCWD, p, unix.O_PATH|unix.O_NOFOLLOW, unix.RESOLVE_NO_SYMLINKS)
	switch {
	case errors.Is(err, unix.ENOENT):
		return -1, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return -1, symlinkError(p, err)
	case err != nil:
		return -1, err
	}
	st, err := fstat(fd)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		closeFd(fd) // O_PATH|O_NOFOLLOW opened the symlink itself
		return -1, symlinkError(p, unix.ELOOP)
	}
	if err == nil {
		err = checkFilesystem(fd, p)
	}
	if err != nil {
		closeFd(fd)
		return -1, err
	}
	return fd, nil
}

// symlinkError is nil when p does not resolve to anything (a dangling
// symlink: skipped, as runc skips it), else a refusal. The stat only
// decides between the two; nothing is mounted on what it finds.
func symlinkError(p string, err error) error {
	if _, serr := os.Stat(p); errors.Is(serr, os.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("resolves through a symlink, which husk does not follow: %w", err)
}

// checkFilesystem fails when fd, the target for path p, is not on procfs
// under /proc or on sysfs under /sys.
func checkFilesystem(fd int, p string) error {
	want, name := int64(0), ""
	switch {
	case p == "/proc" || strings.HasPrefix(p, "/proc/"):
		want, name = unix.PROC_SUPER_MAGIC, "procfs"
	case p == "/sys" || strings.HasPrefix(p, "/sys/"):
		want, name = unix.SYSFS_MAGIC, "sysfs"
	default:
		return nil
	}
	st, err := fstatfs(fd)
	if err != nil {
		return err
	}
	if int64(st.Type) != want {
		return fmt.Errorf("not on %s (filesystem magic %#x)", name, st.Type)
	}
	return nil
}
