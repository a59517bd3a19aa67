package rootfs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyUp copies the directory tree of the O_PATH descriptor from (the
// directory a tmpfs now covers) into the directory at path "to" (the new
// tmpfs): files, directories, symlinks and device nodes, with their
// owners, modes and times. Nothing is followed out of either tree.
func copyUp(from int, to string) error {
	src, err := openat(from, ".", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	dst, err := open(to, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		closeFd(src)
		return err
	}
	defer closeFd(dst)
	if err := copyDir(src, dst); err != nil {
		return err
	}
	st, err := fstat(from)
	if err != nil {
		return err
	}
	return copyAttrs(dst, "", &st)
}

// copyDir copies the entries of directory src into directory dst; it
// closes src.
func copyDir(src, dst int) error {
	d := os.NewFile(uintptr(src), "copyup")
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := copyEntry(src, dst, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// copyEntry copies src/name to dst/name.
func copyEntry(src, dst int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return os.NewSyscallError("fstatat", err)
	}
	var err error
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		err = copySubdir(src, dst, name)
	case unix.S_IFREG:
		err = copyFile(src, dst, name, &st)
	case unix.S_IFLNK:
		err = copySymlink(src, dst, name)
	default: // devices, fifos, sockets
		err = mknodat(dst, name, st.Mode, st.Rdev)
	}
	if err != nil {
		return err
	}
	return copyAttrs(dst, name, &st)
}

func copySubdir(src, dst int, name string) error {
	if err := mkdirat(dst, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return err
	}
	from, err := openat(src, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	to, err := openat(dst, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		closeFd(from)
		return err
	}
	defer closeFd(to)
	return copyDir(from, to)
}

func copyFile(src, dst int, name string, st *unix.Stat_t) error {
	from, err := openat(src, name, unix.O_RDONLY|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	in := os.NewFile(uintptr(from), name)
	defer in.Close()
	to, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return os.NewSyscallError("openat", err)
	}
	out := os.NewFile(uintptr(to), name)
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func copySymlink(src, dst int, name string) error {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(src, name, buf)
	if err != nil {
		return os.NewSyscallError("readlinkat", err)
	}
	return symlinkat(string(buf[:n]), dst, name)
}

// copyAttrs gives dir/name st's owner, mode and times; with name "",
// dir itself gets the owner and mode.
func copyAttrs(dir int, name string, st *unix.Stat_t) error {
	perm := st.Mode & 0o7777
	if name == "" {
		if err := unix.Fchown(dir, int(st.Uid), int(st.Gid)); err != nil {
			return os.NewSyscallError("fchown", err)
		}
		return os.NewSyscallError("fchmod", unix.Fchmod(dir, perm))
	}
	if err := unix.Fchownat(dir, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return os.NewSyscallError("fchownat", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		// After the chown, which clears the setuid and setgid bits.
		if err := fchmodat(dir, name, perm); err != nil {
			return err
		}
	}
	times := []unix.Timespec{st.Atim, st.Mtim}
	return os.NewSyscallError("utimensat", unix.UtimesNanoAt(dir, name, times, unix.AT_SYMLINK_NOFOLLOW))
}
