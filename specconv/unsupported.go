package specconv

import (
	"fmt"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// unsupported refuses the fields husk cannot apply yet whose absence would
// weaken the container, and warns about the other ones it does not apply.
func (c *converter) unsupported() error {
	s := c.spec
	if err := c.hooks(); err != nil {
		return err
	}
	if p := s.Process; p != nil {
		switch {
		case p.Terminal:
			return notSupported("process.terminal", `set it to false and give the container stdio instead`)
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
		case l.Seccomp != nil:
			return notSupported("linux.seccomp", "remove it to run without a seccomp filter")
		case l.MountLabel != "":
			return notSupported("linux.mountLabel", fmt.Sprintf("remove %q to mount without an SELinux label", l.MountLabel))
		case l.IntelRdt != nil:
			return notSupported("linux.intelRdt", "remove it to run without RDT limits")
		case l.Personality != nil:
			return notSupported("linux.personality", fmt.Sprintf("remove it to run with the default personality, not %q", l.Personality.Domain))
		}
		if parts := resourceParts(l.Resources); len(parts) > 0 {
			c.warn("linux.resources", "cgroup limits are not applied yet ("+strings.Join(parts, ", ")+")")
		}
		if l.CgroupsPath != "" {
			c.warn("linux.cgroupsPath", fmt.Sprintf("cgroups are not used yet, %q is not created", l.CgroupsPath))
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

// hooks refuses any hook: husk does not run them yet.
func (c *converter) hooks() error {
	h := c.spec.Hooks
	if h == nil {
		return nil
	}
	for _, l := range []struct {
		name  string
		hooks []specs.Hook
	}{
		{"prestart", h.Prestart},
		{"createRuntime", h.CreateRuntime},
		{"createContainer", h.CreateContainer},
		{"startContainer", h.StartContainer},
		{"poststart", h.Poststart},
		{"poststop", h.Poststop},
	} {
		if len(l.hooks) > 0 {
			return notSupported("hooks."+l.name, fmt.Sprintf("husk does not run hooks, %q would not run", l.hooks[0].Path))
		}
	}
	return nil
}

// resourceParts names the parts of r that set a cgroup limit. The single
// deny-all device rule `runc spec` writes is no limit: husk's devices are
// the ones in linux.devices anyway.
func resourceParts(r *specs.LinuxResources) []string {
	if r == nil {
		return nil
	}
	var parts []string
	add := func(name string, set bool) {
		if set {
			parts = append(parts, name)
		}
	}
	add("devices", !onlyDenyAll(r.Devices))
	add("memory", r.Memory != nil)
	add("cpu", r.CPU != nil)
	add("pids", r.Pids != nil)
	add("blockIO", r.BlockIO != nil)
	add("hugepageLimits", len(r.HugepageLimits) > 0)
	add("network", r.Network != nil)
	add("rdma", len(r.Rdma) > 0)
	add("unified", len(r.Unified) > 0)
	return parts
}

// onlyDenyAll reports whether rules are empty or just "deny all access".
func onlyDenyAll(rules []specs.LinuxDeviceCgroup) bool {
	switch len(rules) {
	case 0:
		return true
	case 1:
		r := rules[0]
		return !r.Allow && (r.Type == "" || r.Type == "a") && r.Major == nil && r.Minor == nil &&
			(r.Access == "" || r.Access == "rwm")
	}
	return false
}
