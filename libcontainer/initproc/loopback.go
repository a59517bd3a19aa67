package initproc

import (
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// newNetNamespace reports whether the container has a network namespace
// of its own, made for it (not joined by path): only then is its
// loopback Go init's to bring up.
func newNetNamespace(cfg *configs.Config) bool {
	ns, ok := cfg.Namespace(configs.NEWNET)
	return ok && ns.Path == ""
}

// loopbackUp sets IFF_UP on "lo" in the caller's network namespace, as
// runc and crun do for a new one (the kernel makes it down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	req, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, req); err != nil {
		return fmt.Errorf("get the flags of lo: %w", err)
	}
	req.SetUint16(req.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, req); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}
