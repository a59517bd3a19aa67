package rootfs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// atimeFlags are the atime modes (and nodiratime); asking one replaces
// the source's.
const atimeFlags = unix.MS_NOATIME | unix.MS_RELATIME | unix.MS_STRICTATIME | unix.MS_NODIRATIME

// lockable are the per-mount flags the kernel locks on the mounts a user
// namespace inherits (MNT_LOCK_*), the atime ones too: a remount that
// would drop or change them fails with EPERM.
const lockable = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | atimeFlags

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
	if err := checkProcSource(r, m, src); err != nil {
		return err
	}
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
// asked replaces the source's. Where the kernel refuses (EPERM: the flags
// are locked, the source came from a more privileged mount namespace),
// the source's locked flags are kept where nothing was asked of them;
// a locked flag asked off, or an atime mode asked that differs from the
// locked one, cannot be honoured, and is an error, as in runc.
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
		return fmt.Errorf("cannot clear flags locked on the source (%s): %w", flagNames(locked), err)
	}
	if asked := want & atimeFlags; asked != 0 && asked != has&atimeFlags {
		return fmt.Errorf("cannot change the atime flags locked on the source (%s) to %s: %w", flagNames(has&atimeFlags), flagNames(asked), err)
	}
	want |= has & lockable
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

// flagPairs are the per-mount flags statfs reports (ST_*) and their MS_*
// names, as /proc/self/mountinfo spells them.
var flagPairs = [...]struct {
	st   int64
	ms   int
	name string
}{
	{unix.ST_RDONLY, unix.MS_RDONLY, "ro"},
	{unix.ST_NOSUID, unix.MS_NOSUID, "nosuid"},
	{unix.ST_NODEV, unix.MS_NODEV, "nodev"},
	{unix.ST_NOEXEC, unix.MS_NOEXEC, "noexec"},
	{unix.ST_NOATIME, unix.MS_NOATIME, "noatime"},
	{unix.ST_NODIRATIME, unix.MS_NODIRATIME, "nodiratime"},
	{unix.ST_RELATIME, unix.MS_RELATIME, "relatime"},
	{stNosymfollow, unix.MS_NOSYMFOLLOW, "nosymfollow"},
	{0, unix.MS_STRICTATIME, "strictatime"},
}

// mountFlags turns statfs's ST_* flags into the matching MS_* flags. A
// mount with neither noatime nor relatime is strictatime, which statfs
// cannot say (the kernel keeps no such flag): it is added, so an atime
// mode compares whole.
func mountFlags(st int64) int {
	ms := 0
	for _, p := range flagPairs {
		if p.st != 0 && st&p.st != 0 {
			ms |= p.ms
		}
	}
	if ms&(unix.MS_NOATIME|unix.MS_RELATIME) == 0 {
		ms |= unix.MS_STRICTATIME
	}
	return ms
}

// flagNames spells the MS_* flags of flags as mount options: "ro,nodev".
func flagNames(flags int) string {
	var names []string
	for _, p := range flagPairs {
		if flags&p.ms != 0 {
			names = append(names, p.name)
		}
	}
	return strings.Join(names, ",")
}
