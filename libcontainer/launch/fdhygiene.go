package launch

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeOnExecAll marks every fd from 3 up close-on-exec before husk starts
// `husk init` or a hook: an fd husk's caller left open without it (a
// shell's `exec 7</`) would otherwise ride along into the container, where
// /proc/self/fd/7 is the host's root (CVE-2024-21626). What init must get
// is handed over by exec.Cmd, which dups each ExtraFiles entry onto its
// number and clears the flag there: the --preserve-fds and LISTEN_FDS
// files keep working. nsexec closes whatever still slips through
// (nsenter/io.c: only the contract's fds survive).
func closeOnExecAll() {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return
	}
	// Kernels before 5.11 have no CLOSE_RANGE_CLOEXEC: one fd at a time.
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd >= 3 {
			unix.CloseOnExec(fd)
		}
	}
}
