package specconv

import "fmt"

// unsupported refuses the fields husk cannot apply yet whose absence would
// weaken the container, and warns about the other ones it does not apply.
func (c *converter) unsupported() error {
	s := c.spec
	if p := s.Process; p != nil {
		switch {
		case p.ApparmorProfile != "":
			return notSupported("process.apparmorProfile", fmt.Sprintf("remove %q to run without AppArmor", p.ApparmorProfile))
		case p.SelinuxLabel != "":
			return notSupported("process.selinuxLabel", fmt.Sprintf("remove %q to run without an SELinux label", p.SelinuxLabel))
		}
		if p.Scheduler != nil {
			c.warn("process.scheduler", "the scheduling policy is not applied yet")
		}
		if p.IOPriority != nil {
			c.warn("process.ioPriority", "the I/O priority is not applied yet")
		}
		if p.ExecCPUAffinity != nil {
			c.warn("process.execCPUAffinity", "the CPU affinity is not applied yet")
		}
	}
	if l := s.Linux; l != nil {
		switch {
		case l.MountLabel != "":
			return notSupported("linux.mountLabel", fmt.Sprintf("remove %q to mount without an SELinux label", l.MountLabel))
		case l.IntelRdt != nil:
			return notSupported("linux.intelRdt", "remove it to run without RDT limits")
		case l.Personality != nil:
			return notSupported("linux.personality", fmt.Sprintf("remove it to run with the default personality, not %q", l.Personality.Domain))
		}
		if len(l.NetDevices) > 0 {
			c.warn("linux.netDevices", "network devices are not moved into the container yet")
		}
		if l.MemoryPolicy != nil {
			c.warn("linux.memoryPolicy", "the NUMA memory policy is not applied yet")
		}
	}
	for _, other := range []struct {
		name string
		set  bool
	}{
		{"solaris", s.Solaris != nil}, {"windows", s.Windows != nil}, {"vm", s.VM != nil},
		{"zos", s.ZOS != nil}, {"freebsd", s.FreeBSD != nil},
	} {
		if other.set {
			c.warn(other.name, "ignored on Linux")
		}
	}
	return nil
}
