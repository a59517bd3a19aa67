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
