package rootfs

import (
	"errors"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// lockable are the per-mount flags the kernel locks on the mounts a user
// namespace inherits: a remount that would drop them fails with EPERM.
const lockable = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// atimeFlags are the atime modes; asking one replaces the source's mode.
const atimeFlags = unix.MS_NOATIME | unix.MS_RELATIME | unix.MS_STRICTATIME | unix.MS_NODIRATIME

// bindFlags are the flags of the bind itself; the rest need a remount.
const bindFlags = unix.MS_BIND | unix.MS_REC | unix.MS_REMOUNT

// bindMount binds m.Source (a host path, opened by OpenSource) at
// m.Destination inside the rootfs: onto a directory, or onto an empty
// file when the source is not one. The bind ignores other flags, so a
// remount then applies them.
func bindMount(r *rootDir, m *configs.Mount) error {
	src, err := OpenSource(r.given, m.Source)
	if err != nil {
		return err
	}
	defer closeFd(src)
	return bindFd(r, m, src, false)
}

// bindOutside binds mounts[i], whose source the parent opened outside the
// container's user namespace: bound through /proc/self/fd, or, idmapped,
// attached with move_mount.
func bindOutside(r *rootDir, m *configs.Mount, i int) error {
	src, err := r.openSource(i)
	if err != nil {
		return err
	}
	defer closeFd(src)
	return bindFd(r, m, src, m.IDMap != nil)
}

// bindFd binds the source src at m.Destination: through /proc/self/fd,
// or, for a detached mount tree (open_tree), attached with move_mount.
func bindFd(r *rootDir, m *configs.Mount, src int, detached bool) error {
	st, err := fstat(src)
	if err != nil {
		return err
	}
	dst, err := r.open(m.Destination, destKind(st.Mode&unix.S_IFMT == unix.S_IFDIR))
	if err != nil {
		return err
	}
	if detached {
		err = moveMount(src, dst.fd)
	} else {
		err = mount(procFd(src), dst.proc(), "", unix.MS_BIND|m.Flags&unix.MS_REC, "")
	}
	dst.close()
	if err != nil {
		return err
	}
	return finishBind(r, m)
}

// destKind is what a bind's destination must be made as.
func destKind(dir bool) create {
	if dir {
		return makeDir
	}
	return makeFile
}

// finishBind applies a bind's flags, recursive attributes and propagation
// once the bind is at its destination.
func finishBind(r *rootDir, m *configs.Mount) error {
	if m.Flags&^bindFlags != 0 || m.ClearedFlags != 0 {
		if err := r.at(m.Destination, func(p string) error {
			return remountExact(p, m.Flags, m.ClearedFlags)
		}); err != nil {
			return err
		}
	}
	return finishMount(r, m)
}

// remountExact gives the bind mount at target exactly the per-mount flags
// asked, as runc does: what was not asked is cleared, and an atime mode
// asked replaces the source's. Only where the kernel refuses (EPERM: the
// flags are locked, the source came from a more privileged mount
// namespace) are the source's lockable flags kept, unless asked off.
func remountExact(target string, flags, cleared int) error {
	want := flags &^ bindFlags
	err := mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|want, "")
	if !errors.Is(err, unix.EPERM) {
		return wrapRemount(want, err)
	}
	st, serr := statfs(target)
	if serr != nil {
		return serr
	}
	has := mountFlags(st.Flags)
	if locked := has & lockable & cleared; locked != 0 {
		return fmt.Errorf("flags %#x are locked on the source and cannot be cleared: %w", locked, err)
	}
	want |= has & lockable
	if want&atimeFlags != 0 && has&atimeFlags != want&atimeFlags {
		want = want&^atimeFlags | has&atimeFlags // the atime mode is locked too
	}
	return wrapRemount(want, mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|want, ""))
}

func wrapRemount(flags int, err error) error {
	if err != nil {
		return fmt.Errorf("remount with flags %#x: %w", flags, err)
	}
	return nil
}

// remountBind adds flags to the per-mount flags the mount at target has
// (readonlyPaths, a read-only "/" or /dev), keeping the others.
func remountBind(target string, flags, cleared int) error {
	st, err := statfs(target)
	if err != nil {
		return err
	}
	has := mountFlags(st.Flags)
	want := (has|flags&^bindFlags)&^(cleared&lockable) | has&atimeFlags
	if want == has {
		return nil // already so
	}
	return wrapRemount(want, mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|want, ""))
}

// stNosymfollow is statfs's ST_NOSYMFOLLOW (x/sys lacks it).
const stNosymfollow = 0x2000

// mountFlags turns statfs's ST_* flags into the matching MS_* flags.
func mountFlags(st int64) int {
	pairs := [...]struct {
		st int64
		ms int
	}{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID},
		{unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME},
		{stNosymfollow, unix.MS_NOSYMFOLLOW},
	}
	ms := 0
	for _, p := range pairs {
		if st&p.st != 0 {
			ms |= p.ms
		}
	}
	return ms
}
