package initproc

import (
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"golang.org/x/sys/unix"
)

// kernel is every kernel call Go init makes, each behind a small function
// named for it, so that build's order and its error paths are tested
// with a fake (init_test.go), without root. The rootfs package's many
// calls sit behind its one step, up to pivot_root.
type kernel struct {
	// setupRootfs mounts the rootfs and pivots into it; atMount runs
	// with the rootfs mounted, before pivot_root (CREATE_HOOKS).
	setupRootfs func(cfg *configs.Config, atMount func() error, sources rootfs.SourceOpener) error
	// takeDevNull is the host's /dev/null that setupRootfs cloned
	// before pivot_root, for pid 1 to mask files with (-1: none).
	takeDevNull func() int
	// openPty makes the pty, sends its master over the console socket
	// and returns the slave (the launcher's C function).
	openPty OpenPty
	// loopbackUp brings "lo" up in a new network namespace.
	loopbackUp func() error
	// openRoot opens "/" (O_PATH), the root handed over to pid 1.
	openRoot func() (int, error)
	// sendmsg sends p with the fds in oob (SCM_RIGHTS) on fd.
	sendmsg func(fd int, p, oob []byte) error
	close   func(fd int) error
}

// hostKernel is the kernel itself; openPty is the launcher's.
func hostKernel(openPty OpenPty) *kernel {
	return &kernel{
		setupRootfs: rootfs.SetupWith,
		takeDevNull: rootfs.TakeDevNull,
		openPty:     openPty,
		loopbackUp:  loopbackUp,
		openRoot: func() (int, error) {
			return unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		},
		sendmsg: func(fd int, p, oob []byte) error { return unix.Sendmsg(fd, p, oob, nil, 0) },
		close:   unix.Close,
	}
}
