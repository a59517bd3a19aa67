package specconv

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	devcfg "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// cgroups converts linux.cgroupsPath and linux.resources. Without either
// (and without the systemd driver) the config keeps no cgroup settings:
// husk's defaults apply (see configs.Config.CgroupConfig). Whether the
// host can honour a value is checked when the cgroups are made, not here.
func (c *converter) cgroups() error {
	l := c.linux()
	if l.CgroupsPath == "" && l.Resources == nil && !c.opts.SystemdCgroup {
		return nil
	}
	cg := &configs.Cgroup{}
	var err error
	if c.opts.SystemdCgroup {
		err = systemdPath(l.CgroupsPath, cg)
		if err == nil {
			cg.SystemdProps, err = systemdProperties(c.spec.Annotations)
		}
	} else {
		cg.Path, err = c.cgroupsPath(l.CgroupsPath)
	}
	if err != nil {
		return err
	}
	if r := l.Resources; r != nil {
		if err := c.deviceRules(r, &cg.Resources); err != nil {
			return err
		}
		if err := c.limits(r, cg); err != nil {
			return err
		}
	}
	cg.Resources.Devices = append(cg.Resources.Devices, configs.DefaultDeviceRules()...)
	c.cfg.Cgroup = cg
	return nil
}

// limits converts every part of r but the device rules into out. Each
// step changes only what r sets (a list given replaces the old one), so
// the same steps serve Convert and UpdateResources.
func (c *converter) limits(r *specs.LinuxResources, out *configs.Cgroup) error {
	if err := c.memory(r, out); err != nil {
		return err
	}
	for _, step := range []func(*specs.LinuxResources, *configs.Resources) error{
		cpu, pids, blockIO, hugepages, network, rdma, unified,
	} {
		if err := step(r, &out.Resources); err != nil {
			return err
		}
	}
	return nil
}

// UpdateResources is cur changed by the limits r sets (what `update`
// takes from --resources and its flags); device rules in r are ignored,
// as runc's update does, and so is memory.kernelTCP (runc's update no
// longer sets it). Errors name the linux.resources field.
func UpdateResources(cur configs.Resources, r *specs.LinuxResources) (configs.Resources, []string, error) {
	c := &converter{}
	if r == nil {
		return cur, nil, nil
	}
	cg := configs.Cgroup{Resources: cur}
	if err := c.limits(r, &cg); err != nil {
		return configs.Resources{}, nil, err
	}
	if cg.KernelMemoryTCP != 0 {
		c.warn(res+"memory.kernelTCP", "ignored by update (as runc's)")
	}
	return cg.Resources, c.warnings, nil
}

const res = "linux.resources."

// cgroupsPath checks linux.cgroupsPath for the cgroupfs driver: absolute,
// or relative to husk's own cgroup. This is the one check of the path; the
// cgroup package trusts it.
//
// The systemd form "slice:prefix:name" without --systemd-cgroup is what
// containerd writes when a pod's cgroup parent is a .slice name and its
// runtime's SystemdCgroup is false (critest does, and so does a node whose
// kubelet and containerd disagree on the driver). runc's cgroupfs driver
// takes the string as a relative path, one directory named after it
// under runc's own cgroup, and so does husk, with a warning that names
// the mismatch.
func (c *converter) cgroupsPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if !path.IsAbs(p) && strings.Count(p, ":") == 2 && !strings.Contains(p, "/") {
		c.warn("linux.cgroupsPath", fmt.Sprintf("%q is the systemd slice:prefix:name form, but the cgroupfs driver is in use (no --systemd-cgroup): taken as a path relative to husk's own cgroup, as runc does", p))
	}
	clean := path.Clean(p)
	switch {
	case clean == "/":
		return "", fieldErrorf("linux.cgroupsPath", "%q is the root cgroup; the container needs one of its own", p)
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return "", fieldErrorf("linux.cgroupsPath", "%q leaves husk's own cgroup; use an absolute path instead", p)
	}
	return clean, nil
}

// DefaultSlice and DefaultScopePrefix place a container with
// --systemd-cgroup and no cgroupsPath: system.slice/husk-<id>.scope (as
// runc's system.slice/runc-<id>.scope).
const (
	DefaultSlice       = "system.slice"
	DefaultScopePrefix = "husk"
)

// systemdPath parses linux.cgroupsPath for the systemd driver: runc's
// "slice:prefix:name", e.g. "system.slice:docker:1234" or containerd's
// "kubepods-besteffort-pod1.slice:cri-containerd:abc". An empty slice is
// system.slice; an empty name is the container id (filled in by the
// cgroup package, which knows it).
func systemdPath(p string, cg *configs.Cgroup) error {
	cg.Systemd = true
	if p == "" {
		cg.Parent, cg.ScopePrefix = DefaultSlice, DefaultScopePrefix
		return nil
	}
	parts := strings.Split(p, ":")
	if len(parts) != 3 {
		return fieldErrorf("linux.cgroupsPath", "%q: with --systemd-cgroup it must be \"slice:prefix:name\" (such as \"system.slice:husk:c1\")", p)
	}
	for i, part := range parts {
		if strings.ContainsAny(part, "/\x00") {
			return fieldErrorf("linux.cgroupsPath", "%q: part %d (%q) of slice:prefix:name must not contain a slash", p, i+1, part)
		}
	}
	if parts[0] != "" && !strings.HasSuffix(parts[0], ".slice") {
		return fieldErrorf("linux.cgroupsPath", "%q: the slice %q must end in .slice", p, parts[0])
	}
	cg.Parent, cg.ScopePrefix, cg.Name = parts[0], parts[1], parts[2]
	if cg.Parent == "" {
		cg.Parent = DefaultSlice
	}
	return nil
}

// systemdPropPrefix marks an annotation that sets a property of the
// container's systemd unit, as runc reads them.
const systemdPropPrefix = "org.systemd.property."

// systemdProperties collects the org.systemd.property.NAME annotations
// (values in systemd's D-Bus text syntax, e.g. "uint64 100" or "'x'").
func systemdProperties(ann map[string]string) (map[string]string, error) {
	var props map[string]string
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		name, ok := strings.CutPrefix(k, systemdPropPrefix)
		if !ok {
			continue
		}
		if name == "" || strings.ContainsAny(name, " =.") {
			return nil, fieldErrorf(fmt.Sprintf("annotations[%q]", k), "%q is not a systemd property name", name)
		}
		if props == nil {
			props = map[string]string{}
		}
		props[name] = ann[k]
	}
	if _, err := configs.SystemdProperties(props); err != nil {
		return nil, err
	}
	return props, nil
}

// deviceRules converts linux.resources.devices; the default rules follow
// them.
func (c *converter) deviceRules(r *specs.LinuxResources, out *configs.Resources) error {
	for i, d := range r.Devices {
		field := index(res+"devices", i)
		rule := &configs.DeviceRule{Allow: d.Allow, Major: configs.Wildcard, Minor: configs.Wildcard}
		switch d.Type {
		case "", "a":
			rule.Type = devcfg.WildcardDevice
		case "c", "b":
			rule.Type = devcfg.Type(d.Type[0])
		default:
			return fieldErrorf(field+".type", `unknown %q, want "a", "b" or "c"`, d.Type)
		}
		for _, n := range []struct {
			name string
			src  *int64
			dst  *int64
		}{{"major", d.Major, &rule.Major}, {"minor", d.Minor, &rule.Minor}} {
			if n.src == nil {
				continue
			}
			if *n.src < 0 && *n.src != configs.Wildcard {
				return fieldErrorf(field+"."+n.name, "%d is negative", *n.src)
			}
			*n.dst = *n.src
		}
		access := d.Access
		if access == "" {
			access = "rwm"
		}
		perms, ignored := normalAccess(access)
		if perms == "" {
			return fieldErrorf(field+".access", "%q: names no access; want some of the letters r, w and m", d.Access)
		}
		if ignored != "" {
			c.warn(field+".access", fmt.Sprintf("%q: letters %q ignored (as runc does); the rule grants %q", d.Access, ignored, perms))
		}
		rule.Permissions = devcfg.Permissions(perms)
		out.Devices = append(out.Devices, rule)
	}
	return nil
}

// normalAccess is the set of r, w and m in a, in that order, and the
// other letters, which runc ignores (a spec's "rwa" means "rw" to it).
func normalAccess(a string) (access, ignored string) {
	for _, ch := range "rwm" {
		if strings.ContainsRune(a, ch) {
			access += string(ch)
		}
	}
	for _, ch := range a {
		if !strings.ContainsRune("rwm", ch) && !strings.ContainsRune(ignored, ch) {
			ignored += string(ch)
		}
	}
	return access, ignored
}

func (c *converter) memory(r *specs.LinuxResources, cg *configs.Cgroup) error {
	m := r.Memory
	if m == nil {
		return nil
	}
	out := &cg.Resources
	for _, l := range []struct {
		name string
		src  *int64
		dst  *int64
	}{
		{"limit", m.Limit, &out.Memory},
		{"reservation", m.Reservation, &out.MemoryReservation},
		{"swap", m.Swap, &out.MemorySwap},
		{"kernelTCP", m.KernelTCP, &cg.KernelMemoryTCP},
	} {
		if l.src == nil {
			continue
		}
		if *l.src < -1 {
			return fieldErrorf(res+"memory."+l.name, "%d: want bytes, or -1 for no limit", *l.src)
		}
		*l.dst = *l.src
	}
	// As runc: an unlimited memory makes the swap unlimited too, so that
	// `update --memory -1` after a swap limit is not refused by the
	// kernel (memory+swap below memory).
	if m.Limit != nil && *m.Limit == -1 && m.Swap == nil {
		out.MemorySwap = -1
	}
	if out.MemorySwap > 0 && out.Memory > 0 && out.MemorySwap < out.Memory {
		return fieldErrorf(res+"memory.swap", "%d is below memory.limit %d (swap counts memory plus swap)", out.MemorySwap, out.Memory)
	}
	if out.MemorySwap > 0 && out.Memory <= 0 {
		return fieldErrorf(res+"memory.swap", "%d needs a memory.limit", out.MemorySwap)
	}
	if m.Swappiness != nil {
		if *m.Swappiness > 100 {
			return fieldErrorf(res+"memory.swappiness", "%d: want 0 to 100", *m.Swappiness)
		}
		v := *m.Swappiness
		out.MemorySwappiness = &v
	}
	if m.DisableOOMKiller != nil {
		out.OomKillDisable = *m.DisableOOMKiller
	}
	if m.CheckBeforeUpdate != nil {
		out.MemoryCheckBeforeUpdate = *m.CheckBeforeUpdate
	}
	if m.Kernel != nil {
		c.warn(res+"memory.kernel", "ignored: the kernel no longer limits kernel memory separately")
	}
	if m.UseHierarchy != nil && !*m.UseHierarchy {
		c.warn(res+"memory.useHierarchy", "ignored: memory accounting is always hierarchical")
	}
	return nil
}

// cpuList matches a cpuset list such as "0-3,5,7-8".
// Compiled on first use, not in every husk process.
var cpuList = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`)
})

func cpu(r *specs.LinuxResources, out *configs.Resources) error {
	u := r.CPU
	if u == nil {
		return nil
	}
	if u.Shares != nil {
		out.CpuShares = *u.Shares
	}
	if u.Quota != nil {
		if *u.Quota < -1 || (*u.Quota > 0 && *u.Quota < 1000) {
			return fieldErrorf(res+"cpu.quota", "%d: want at least 1000 (µs), or -1 for no limit", *u.Quota)
		}
		out.CpuQuota = *u.Quota
	}
	if u.Period != nil {
		if *u.Period != 0 && (*u.Period < 1000 || *u.Period > 1000000) {
			return fieldErrorf(res+"cpu.period", "%d: want 1000 to 1000000 (µs)", *u.Period)
		}
		out.CpuPeriod = *u.Period
	}
	if u.Burst != nil {
		v := *u.Burst
		out.CpuBurst = &v
	}
	if u.RealtimeRuntime != nil {
		out.CpuRtRuntime = *u.RealtimeRuntime
	}
	if u.RealtimePeriod != nil {
		out.CpuRtPeriod = *u.RealtimePeriod
	}
	if u.Idle != nil {
		if *u.Idle != 0 && *u.Idle != 1 {
			return fieldErrorf(res+"cpu.idle", "%d: want 0 or 1", *u.Idle)
		}
		v := *u.Idle
		out.CPUIdle = &v
	}
	for _, s := range []struct {
		name, val string
		dst       *string
	}{{"cpus", u.Cpus, &out.CpusetCpus}, {"mems", u.Mems, &out.CpusetMems}} {
		if s.val == "" {
			continue
		}
		if !cpuList().MatchString(s.val) {
			return fieldErrorf(res+"cpu."+s.name, "%q: want a list such as 0-3,5", s.val)
		}
		*s.dst = s.val
	}
	return nil
}

func pids(r *specs.LinuxResources, out *configs.Resources) error {
	if r.Pids == nil || r.Pids.Limit == nil {
		return nil
	}
	v := *r.Pids.Limit
	out.PidsLimit = &v
	return nil
}

func blockIO(r *specs.LinuxResources, out *configs.Resources) error {
	b := r.BlockIO
	if b == nil {
		return nil
	}
	// weight sets *dst to *w (when given) after checking it.
	weight := func(field string, w *uint16, dst *uint16) error {
		if w == nil {
			return nil
		}
		if *w != 0 && (*w < 10 || *w > 1000) {
			return fieldErrorf(field, "%d: want 10 to 1000", *w)
		}
		*dst = *w
		return nil
	}
	if err := weight(res+"blockIO.weight", b.Weight, &out.BlkioWeight); err != nil {
		return err
	}
	if err := weight(res+"blockIO.leafWeight", b.LeafWeight, &out.BlkioLeafWeight); err != nil {
		return err
	}
	if b.WeightDevice != nil {
		out.BlkioWeightDevice = nil
	}
	for i, d := range b.WeightDevice {
		field := index(res+"blockIO.weightDevice", i)
		wd := &cgroups.WeightDevice{}
		wd.Major, wd.Minor = d.Major, d.Minor
		if err := weight(field+".weight", d.Weight, &wd.Weight); err != nil {
			return err
		}
		if err := weight(field+".leafWeight", d.LeafWeight, &wd.LeafWeight); err != nil {
			return err
		}
		out.BlkioWeightDevice = append(out.BlkioWeightDevice, wd)
	}
	for _, l := range []struct {
		name string
		src  []specs.LinuxThrottleDevice
		dst  *[]*cgroups.ThrottleDevice
	}{
		{"throttleReadBpsDevice", b.ThrottleReadBpsDevice, &out.BlkioThrottleReadBpsDevice},
		{"throttleWriteBpsDevice", b.ThrottleWriteBpsDevice, &out.BlkioThrottleWriteBpsDevice},
		{"throttleReadIOPSDevice", b.ThrottleReadIOPSDevice, &out.BlkioThrottleReadIOPSDevice},
		{"throttleWriteIOPSDevice", b.ThrottleWriteIOPSDevice, &out.BlkioThrottleWriteIOPSDevice},
	} {
		if l.src != nil {
			*l.dst = nil
		}
		for i, d := range l.src {
			if d.Major < 0 || d.Minor < 0 {
				return fieldErrorf(index(res+"blockIO."+l.name, i), "device %d:%d: numbers must not be negative", d.Major, d.Minor)
			}
			*l.dst = append(*l.dst, cgroups.NewThrottleDevice(d.Major, d.Minor, d.Rate))
		}
	}
	return nil
}

// pageSize matches a hugepage size as config.json and the kernel name it.
var pageSize = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]*[KMG]B$`) })

func hugepages(r *specs.LinuxResources, out *configs.Resources) error {
	if r.HugepageLimits != nil {
		out.HugetlbLimit = nil
	}
	for i, h := range r.HugepageLimits {
		if !pageSize().MatchString(h.Pagesize) {
			return fieldErrorf(index(res+"hugepageLimits", i)+".pageSize", "%q: want a size such as 2MB or 1GB", h.Pagesize)
		}
		out.HugetlbLimit = append(out.HugetlbLimit, &cgroups.HugepageLimit{Pagesize: h.Pagesize, Limit: h.Limit})
	}
	return nil
}

func network(r *specs.LinuxResources, out *configs.Resources) error {
	n := r.Network
	if n == nil {
		return nil
	}
	if n.ClassID != nil {
		out.NetClsClassid = *n.ClassID
	}
	if n.Priorities != nil {
		out.NetPrioIfpriomap = nil
	}
	for i, p := range n.Priorities {
		if p.Name == "" {
			return fieldErrorf(index(res+"network.priorities", i)+".name", "must not be empty")
		}
		out.NetPrioIfpriomap = append(out.NetPrioIfpriomap, &cgroups.IfPrioMap{Interface: p.Name, Priority: int64(p.Priority)})
	}
	return nil
}

func rdma(r *specs.LinuxResources, out *configs.Resources) error {
	if len(r.Rdma) == 0 {
		return nil
	}
	out.Rdma = map[string]cgroups.LinuxRdma{}
	for dev, l := range r.Rdma {
		if dev == "" || strings.ContainsAny(dev, " \n") {
			return fieldErrorf(res+"rdma", "device name %q", dev)
		}
		out.Rdma[dev] = cgroups.LinuxRdma{HcaHandles: l.HcaHandles, HcaObjects: l.HcaObjects}
	}
	return nil
}

func unified(r *specs.LinuxResources, out *configs.Resources) error {
	for _, k := range slices.Sorted(maps.Keys(r.Unified)) {
		ctrl, setting, ok := strings.Cut(k, ".")
		if !ok || ctrl == "" || setting == "" || strings.ContainsAny(k, "/\x00") {
			return fieldErrorf(fmt.Sprintf("%sunified[%q]", res, k), "not a cgroup v2 file name (controller.setting)")
		}
	}
	if len(r.Unified) > 0 {
		merged := maps.Clone(out.Unified)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, r.Unified)
		out.Unified = merged
	}
	return nil
}
