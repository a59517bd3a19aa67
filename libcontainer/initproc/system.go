package initproc

import (
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/console"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"golang.org/x/sys/unix"
)

// setupSystem sets what belongs to the container's namespaces rather than
// to its process: host and domain name, sysctls.
func setupSystem(cfg *configs.Config) error {
	if cfg.Hostname != "" {
		if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
			return fmt.Errorf("hostname: sethostname %q: %w", cfg.Hostname, err)
		}
	}
	if cfg.Domainname != "" {
		if err := unix.Setdomainname([]byte(cfg.Domainname)); err != nil {
			return fmt.Errorf("domainname: setdomainname %q: %w", cfg.Domainname, err)
		}
	}
	for k, v := range cfg.Sysctl {
		// Through a checked procfs fd, never a path (CVE-2025-52881).
		if err := rootfs.WriteSysctl(k, v); err != nil {
			return fmt.Errorf("linux.sysctl[%q]: write %q: %w", k, v, err)
		}
	}
	return nil
}

// setupConsole makes the container's pty (process.terminal), sends its
// master over the console socket and binds the slave onto /dev/console;
// it returns the slave for pid 1, which makes it the process's stdio and
// controlling terminal (-1 without a terminal).
func setupConsole(cfg *configs.Config, side *inherited, openPty OpenPty) (int, error) {
	p := cfg.Process
	if !p.Terminal {
		return -1, nil
	}
	defer side.console.Close()
	var rows, cols uint16
	if s := p.ConsoleSize; s != nil {
		rows, cols = s.Height, s.Width
	}
	slave, err := openPty(int(side.console.Fd()), p.ConsoleSize != nil, rows, cols, p.User.UID)
	if err != nil {
		return -1, err
	}
	if err := console.BindConsole(slave); err != nil {
		unix.Close(slave)
		return -1, fmt.Errorf("process.terminal: %w", err)
	}
	return slave, nil
}
