package configs

import (
	"fmt"
	"os"
	"strings"
)

// Where the host tells whether it has each facility. Variables, so tests
// can point them elsewhere.
var (
	apparmorEnabledFile = "/sys/module/apparmor/parameters/enabled"
	selinuxFS           = "/sys/fs/selinux"
	resctrlFS           = "/sys/fs/resctrl"
)

// AppArmorEnabled reports whether the host's kernel enforces AppArmor.
func AppArmorEnabled() bool {
	b, err := os.ReadFile(apparmorEnabledFile)
	return err == nil && strings.HasPrefix(string(b), "Y")
}

// SELinuxEnabled reports whether the host has SELinux (selinuxfs mounted).
func SELinuxEnabled() bool {
	_, err := os.Stat(selinuxFS + "/enforce")
	return err == nil
}

// ResctrlEnabled reports whether the host has the resctrl filesystem
// mounted, which Intel RDT needs.
func ResctrlEnabled() bool {
	_, err := os.Stat(resctrlFS + "/schemata")
	return err == nil
}

// checkSecurity refuses the LSM labels and RDT settings the host cannot
// honour, and the ones husk does not apply yet, naming field and value.
func checkSecurity(c *Config) error {
	if err := CheckProcessLabels(c.Process); err != nil {
		return err
	}
	if c.MountLabel != "" {
		if !SELinuxEnabled() {
			return fmt.Errorf("linux.mountLabel: %q: SELinux is not enabled on this host (no %s)", c.MountLabel, selinuxFS)
		}
		return fmt.Errorf("linux.mountLabel: %q: husk does not label mounts yet; remove it", c.MountLabel)
	}
	if c.IntelRdt != nil {
		if !ResctrlEnabled() {
			return fmt.Errorf("linux.intelRdt: Intel RDT is not enabled on this host (no resctrl filesystem at %s)", resctrlFS)
		}
		return fmt.Errorf("linux.intelRdt: husk does not apply Intel RDT settings yet; remove it")
	}
	return nil
}

// CheckProcessLabels refuses a process's LSM labels when the host lacks
// the LSM (create, and exec's --process, --apparmor, --process-label).
func CheckProcessLabels(p *Process) error {
	if p.AppArmorProfile != "" && !AppArmorEnabled() {
		return fmt.Errorf("process.apparmorProfile: %q: AppArmor is not enabled on this host (%s)", p.AppArmorProfile, apparmorEnabledFile)
	}
	if p.SelinuxLabel != "" && !SELinuxEnabled() {
		return fmt.Errorf("process.selinuxLabel: %q: SELinux is not enabled on this host (no %s)", p.SelinuxLabel, selinuxFS)
	}
	return nil
}
