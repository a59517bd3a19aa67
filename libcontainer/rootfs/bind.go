package rootfs

import (
	"fmt"
	"os"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// lockable are the per-mount flags a bind remount must keep when the
// source mount has them: in a user namespace the kernel locks them and
// refuses (EPERM) a remount that would drop them, and elsewhere dropping
// them silently would make the bind weaker than its source.
const lockable = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// bindFlags are the flags of the bind itself; the rest need a remount.
const bindFlags = unix.MS_BIND | unix.MS_REC | unix.MS_REMOUNT

// bindMount binds m.Source (a host path) at m.Destination inside the rootfs:
// onto a directory, or onto an empty file when the source is not one. The
// bind ignores other flags, so a remount then applies them.
func bindMount(r *rootDir, m *configs.Mount) error {
	fi, err := os.Stat(m.Source)
	if err != nil {
		return err
	}
	kind := makeDir
	if !fi.IsDir() {
		kind = makeFile
	}
	dst, err := r.open(m.Destination, kind)
	if err != nil {
		return err
	}
	err = mount(m.Source, dst.proc(), "", unix.MS_BIND|m.Flags&unix.MS_REC, "")
	dst.close()
	if err != nil {
		return err
	}
	if m.Flags&^bindFlags != 0 || m.ClearedFlags&lockable != 0 {
		// Reopen: the path now leads to the new mount's root.
		dst, err := r.open(m.Destination, mustExist)
		if err != nil {
			return err
		}
		err = remountBind(dst.proc(), m.Flags, m.ClearedFlags)
		dst.close()
		if err != nil {
			return err
		}
	}
	return finishMount(r, m)
}

// remountBind sets the per-mount flags of the mount at target to flags,
// keeping the lockable flags it has unless they are in cleared (asked off).
// Atime flags not asked for are kept by the kernel itself.
func remountBind(target string, flags, cleared int) error {
	st, err := statfs(target)
	if err != nil {
		return err
	}
	has := mountFlags(st.Flags)
	keep := has & lockable &^ cleared
	want := flags&^bindFlags | keep
	if want&^lockable == 0 && want == has&lockable {
		return nil // already so
	}
	if err := mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|want, ""); err != nil {
		return fmt.Errorf("remount with flags %#x: %w", want, err)
	}
	return nil
}

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
	}
	ms := 0
	for _, p := range pairs {
		if st&p.st != 0 {
			ms |= p.ms
		}
	}
	return ms
}
