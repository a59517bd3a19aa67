package seccomp

import (
	"errors"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// Load installs the compiled program on the calling thread (all threads
// with SECCOMP_FILTER_FLAG_TSYNC). Without no_new_privs the caller needs
// CAP_SYS_ADMIN. It returns the notify fd when the program has one, else
// -1. The fd is close-on-exec.
func Load(p *configs.SeccompProgram) (int, error) {
	if p == nil || len(p.Filter) == 0 {
		return -1, errors.New("linux.seccomp: no compiled filter (the parent compiles it before starting init)")
	}
	if len(p.Filter)%sockFilterSize != 0 || len(p.Filter)/sockFilterSize > unix.BPF_MAXINSNS {
		return -1, fmt.Errorf("linux.seccomp: a filter of %d bytes is not a BPF program the kernel takes", len(p.Filter))
	}
	fd, err := seccompSetModeFilter(p.Flags, p.Filter)
	if err != nil {
		return -1, fmt.Errorf("linux.seccomp: seccomp(SET_MODE_FILTER, flags %#x): %w", p.Flags, err)
	}
	if p.Flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 {
		return -1, nil
	}
	// The kernel makes the listener fd close-on-exec already.
	return fd, nil
}
