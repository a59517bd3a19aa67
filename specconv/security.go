package specconv

import "github.com/husk-runtime/husk/libcontainer/configs"

// security copies the LSM labels and the Intel RDT request. Whether the
// host has AppArmor, SELinux or resctrl is a question for the host:
// configs.Validate asks it at create and refuses what the host lacks.
func (c *converter) security() error {
	if p := c.spec.Process; p != nil {
		c.cfg.Process.AppArmorProfile = p.ApparmorProfile
		c.cfg.Process.SelinuxLabel = p.SelinuxLabel
	}
	if l := c.linux(); l != nil {
		c.cfg.MountLabel = l.MountLabel
		if r := l.IntelRdt; r != nil {
			c.cfg.IntelRdt = &configs.IntelRdt{ClosID: r.ClosID}
		}
	}
	return nil
}
