package initproc

import (
	"fmt"
	"os"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// setupSystem sets what belongs to the container's namespaces rather than
// to its process: host and domain name, sysctls, the session keyring.
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
		path := "/proc/sys/" + strings.ReplaceAll(k, ".", "/")
		if err := os.WriteFile(path, []byte(v), 0); err != nil {
			return fmt.Errorf("linux.sysctl[%q]: write %q: %w", k, v, err)
		}
	}
	if !cfg.NoNewKeyring {
		if _, err := unix.KeyctlJoinSessionKeyring("_ses"); err != nil && err != unix.ENOSYS {
			return fmt.Errorf("join a new session keyring: %w", err)
		}
	}
	return nil
}
