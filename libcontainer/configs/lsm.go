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
	resctrlFS           = "/sys/fs/resctrl"
)

// AppArmorEnabled reports whether the host's kernel enforces AppArmor.
func AppArmorEnabled() bool {
	b, err := os.ReadFile(apparmorEnabledFile)
	return err == nil && strings.HasPrefix(string(b), "Y")
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
	if err := checkSELinuxLabel("linux.mountLabel", c.MountLabel); err != nil {
		return err
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
	return checkSELinuxLabel("process.selinuxLabel", p.SelinuxLabel)
}
