package caps

import "golang.org/x/sys/unix"

// The kernel calls of this package, one small function per call. They act
// on the calling thread only.

// prctlCapbsetRead reports whether capability v is in the bounding set.
func prctlCapbsetRead(v int) (bool, error) {
	r, _, errno := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_READ, uintptr(v), 0, 0, 0, 0)
	if errno != 0 {
		return false, errno
	}
	return r == 1, nil
}

// prctlCapbsetDrop removes capability v from the bounding set.
func prctlCapbsetDrop(v int) error {
	return unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(v), 0, 0, 0)
}

// capset sets the effective, permitted and inheritable sets (64-bit masks)
// with the version 3 interface: two 32-bit data words per set.
func capset(effective, permitted, inheritable uint64) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := [2]unix.CapUserData{
		{Effective: uint32(effective), Permitted: uint32(permitted), Inheritable: uint32(inheritable)},
		{Effective: uint32(effective >> 32), Permitted: uint32(permitted >> 32), Inheritable: uint32(inheritable >> 32)},
	}
	return unix.Capset(&hdr, &data[0])
}

// prctlCapAmbientClearAll empties the ambient set.
func prctlCapAmbientClearAll() error {
	return unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
}

// prctlCapAmbientRaise adds capability v to the ambient set.
func prctlCapAmbientRaise(v int) error {
	return unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(v), 0, 0)
}
