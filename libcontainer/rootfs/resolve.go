package rootfs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"
)

// rootDir is the container's rootfs while Setup builds it: its host path and
// an O_PATH descriptor of it that every mount destination is resolved from.
type rootDir struct {
	path       string
	given      string // root.path as the config gives it
	fd         int
	openSource SourceOpener // nil: init opens every bind source itself
	mountLabel string       // linux.mountLabel: label.go
}

// SourceOpener returns an fd of mounts[i]'s source, opened by the parent
// outside the container's user namespace (O_PATH), or a detached mount
// tree (open_tree) for an idmapped mount.
type SourceOpener func(i int) (int, error)

// openRoot opens the rootfs at path, which must have no symlinks in it. Open
// it after the rootfs is bound onto itself, so lookups start on that mount.
func openRoot(path string) (*rootDir, error) {
	fd, err := open(path, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return &rootDir{path: path, fd: fd}, nil
}

func (r *rootDir) close() { closeFd(r.fd) }

// coverRoot follows a mount made on the rootfs itself (a mount whose
// destination is "/"): r.fd still names the directory below it, so the
// mounts after it, and a tmpcopyup's copy, would land under it. Any
// other destination is left alone.
func (r *rootDir) coverRoot(dest string) error {
	if filepath.Clean("/"+dest) != "/" {
		return nil
	}
	fd, err := open(r.path, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return fmt.Errorf("reopen the rootfs %s: %w", r.path, err)
	}
	closeFd(r.fd)
	r.fd = fd
	return nil
}

// create says what open makes when a path is missing.
type create int

const (
	mustExist create = iota // nothing: the path must exist
	makeDir                 // missing directories, the last one too
	makeFile                // missing directories, then an empty file
	realDir                 // makeDir, through no symlink at all (proc, sysfs)
)

// handle pins a resolved path inside the rootfs with an O_PATH descriptor.
// Mounting on proc() cannot be redirected by a symlink swapped in later.
type handle struct{ fd int }

func (h *handle) proc() string { return procFd(h.fd) }

// procFd is the /proc path that stands for fd.
func procFd(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

func (h *handle) close() { closeFd(h.fd) }

// open resolves the container path p inside the rootfs. SecureJoin first
// resolves the symlinks in p as if the rootfs were "/"; the result is then
// walked again one component at a time from the rootfs descriptor without
// following any symlink, creating what is missing as c asks. A component that
// turned into a symlink between the two steps is an error, never followed:
// a mount can never land outside the rootfs.
//
// With realDir no symlink is resolved: every component must be a directory,
// as runc demands of proc and sysfs ("must be mounted on ordinary
// directory"), so /proc as a symlink can never redirect them.
func (r *rootDir) open(p string, c create) (*handle, error) {
	joined := filepath.Join(r.path, filepath.Clean("/"+p))
	if c != realDir {
		var err error
		if joined, err = securejoin.SecureJoin(r.path, p); err != nil {
			return nil, fmt.Errorf("resolve %q in rootfs: %w", p, err)
		}
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(joined, r.path), "/")
	dir, err := dup(r.fd)
	if err != nil {
		return nil, err
	}
	if rel == "" {
		return &handle{fd: dir}, nil
	}
	names := strings.Split(rel, "/")
	for i, name := range names {
		last := i == len(names)-1
		fd, err := step(dir, name, last, c)
		closeFd(dir)
		where := "/" + filepath.Join(names[:i+1]...)
		if c == realDir && (errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)) {
			return nil, fmt.Errorf("must be mounted on ordinary directory, %s is not one: %w", where, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		dir = fd
	}
	return &handle{fd: dir}, nil
}

// step opens name in dir with O_PATH|O_NOFOLLOW, creating it if missing.
func step(dir int, name string, last bool, c create) (int, error) {
	flags := unix.O_PATH | unix.O_NOFOLLOW
	if !last || c == makeDir || c == realDir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := openat(dir, name, flags)
	if errors.Is(err, unix.ENOENT) && c != mustExist {
		if last && c == makeFile {
			err = mknodat(dir, name, unix.S_IFREG|0o644, 0)
		} else {
			err = mkdirat(dir, name, 0o755)
		}
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, err
		}
		fd, err = openat(dir, name, flags)
	}
	if err != nil {
		return -1, err
	}
	if flags&unix.O_DIRECTORY != 0 {
		return fd, nil // a symlink fails O_DIRECTORY with ENOTDIR
	}
	// Without O_DIRECTORY, O_PATH|O_NOFOLLOW opens a symlink itself.
	st, err := fstat(fd)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		err = fmt.Errorf("became a symlink while resolving: %w", unix.ELOOP)
	}
	if err != nil {
		closeFd(fd)
		return -1, err
	}
	return fd, nil
}

// mountAt mounts source (of type fstype) on the container path p, opened
// (and made as kind says) inside the rootfs.
func (r *rootDir) mountAt(p string, kind create, source, fstype string, flags int, data string) error {
	dst, err := r.open(p, kind)
	if err != nil {
		return err
	}
	defer dst.close()
	return mount(source, dst.proc(), fstype, flags, data)
}

// at runs fn on the mount at the container path p, reopened so that the
// path leads to the newest mount there.
func (r *rootDir) at(p string, fn func(proc string) error) error {
	dst, err := r.open(p, mustExist)
	if err != nil {
		return err
	}
	defer dst.close()
	return fn(dst.proc())
}
