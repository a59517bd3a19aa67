package cgroup

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
)

// Set applies r, all of it, device rules included: at create time.
func (m *Manager) Set(r *configs.Resources) error {
	return m.set(r, false)
}

// Update applies r to a running container. Device rules are left as they
// are (as runc's update does): rewriting them would briefly deny devices
// the container has open.
func (m *Manager) Update(r *configs.Resources) error {
	return m.set(r, true)
}

func (m *Manager) set(r *configs.Resources, skipDevices bool) error {
	v1res, v2res, v2used, err := m.route(r)
	if err != nil {
		return err
	}
	if v2res.CpuShares != 0 { // fs2 leaves the conversion to its caller
		v2res.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(v2res.CpuShares)
	}
	v1res.SkipDevices = v1res.SkipDevices || skipDevices
	v2res.SkipDevices = v2res.SkipDevices || skipDevices
	if m.v1 != nil {
		if err := m.v1.Set(v1res); err != nil {
			return explain(r, err)
		}
	}
	if m.v2 != nil && (m.layout == V2 || v2used) {
		if err := m.v2.Set(v2res); err != nil {
			return explain(r, err)
		}
	}
	return nil
}

// group is one controller's share of Resources.
type group struct {
	v1, v2 string                             // the controller in each version; "" where it has none
	fields func(r *configs.Resources) []field // the group's fields in r
	copy   func(dst *cgroups.Resources, r *configs.Resources)
}

// field is one field of linux.resources in a Resources.
type field struct {
	set   bool
	name  string // under linux.resources, as config.json names it
	value any
}

// first is the first field of g set in r, with its value; "" for none.
func (g group) first(r *configs.Resources) (string, any) {
	for _, f := range g.fields(r) {
		if f.set {
			return res + f.name, f.value
		}
	}
	return "", nil
}

// valueOf is the value of field (under linux.resources) in r.
func valueOf(r *configs.Resources, field string) (any, bool) {
	for _, g := range groups {
		for _, f := range g.fields(r) {
			if f.name == field {
				return f.value, true
			}
		}
	}
	return nil, false
}

const res = "linux.resources."

var groups = []group{
	{"memory", "memory", func(r *configs.Resources) []field {
		return []field{
			{r.Memory != 0, "memory.limit", r.Memory},
			{r.MemoryReservation != 0, "memory.reservation", r.MemoryReservation},
			{r.MemorySwap != 0, "memory.swap", r.MemorySwap},
		}
	}, func(d *cgroups.Resources, r *configs.Resources) {
		d.Memory, d.MemoryReservation, d.MemorySwap = r.Memory, r.MemoryReservation, r.MemorySwap
		d.MemoryCheckBeforeUpdate = r.MemoryCheckBeforeUpdate
	}},
	{"memory", "", func(r *configs.Resources) []field {
		return []field{{r.MemorySwappiness != nil, "memory.swappiness", deref(r.MemorySwappiness)}}
	}, func(d *cgroups.Resources, r *configs.Resources) { d.MemorySwappiness = r.MemorySwappiness }},
	{"memory", "", func(r *configs.Resources) []field {
		return []field{{r.OomKillDisable, "memory.disableOOMKiller", true}}
	}, func(d *cgroups.Resources, r *configs.Resources) { d.OomKillDisable = r.OomKillDisable }},
	{"cpu", "cpu", func(r *configs.Resources) []field {
		return []field{
			{r.CPUShares != 0, "cpu.shares", r.CPUShares},
			{r.CPUQuota != 0, "cpu.quota", r.CPUQuota},
			{r.CPUPeriod != 0, "cpu.period", r.CPUPeriod},
			{r.CPUBurst != nil, "cpu.burst", deref(r.CPUBurst)},
			{r.CPUIdle != nil, "cpu.idle", deref(r.CPUIdle)},
		}
	}, func(d *cgroups.Resources, r *configs.Resources) {
		d.CpuShares, d.CpuQuota, d.CpuPeriod, d.CpuBurst, d.CPUIdle = r.CPUShares, r.CPUQuota, r.CPUPeriod, r.CPUBurst, r.CPUIdle
	}},
	{"cpu", "", func(r *configs.Resources) []field {
		return []field{
			{r.CPURtRuntime != 0, "cpu.realtimeRuntime", r.CPURtRuntime},
			{r.CPURtPeriod != 0, "cpu.realtimePeriod", r.CPURtPeriod},
		}
	}, func(d *cgroups.Resources, r *configs.Resources) {
		d.CpuRtRuntime, d.CpuRtPeriod = r.CPURtRuntime, r.CPURtPeriod
	}},
	{"cpuset", "cpuset", func(r *configs.Resources) []field {
		return []field{
			{r.CpusetCpus != "", "cpu.cpus", r.CpusetCpus},
			{r.CpusetMems != "", "cpu.mems", r.CpusetMems},
		}
	}, func(d *cgroups.Resources, r *configs.Resources) {
		d.CpusetCpus, d.CpusetMems = r.CpusetCpus, r.CpusetMems
	}},
	{"pids", "pids", func(r *configs.Resources) []field {
		return []field{{r.PidsLimit != nil, "pids.limit", deref(r.PidsLimit)}}
	}, func(d *cgroups.Resources, r *configs.Resources) { d.PidsLimit = r.PidsLimit }},
	{"blkio", "io", func(r *configs.Resources) []field {
		return []field{
			{r.BlkioWeight != 0, "blockIO.weight", r.BlkioWeight},
			{len(r.BlkioWeightDevice) > 0, "blockIO.weightDevice", r.BlkioWeightDevice},
			{len(r.BlkioThrottleReadBpsDevice) > 0, "blockIO.throttleReadBpsDevice", r.BlkioThrottleReadBpsDevice},
			{len(r.BlkioThrottleWriteBpsDevice) > 0, "blockIO.throttleWriteBpsDevice", r.BlkioThrottleWriteBpsDevice},
			{len(r.BlkioThrottleReadIOPSDevice) > 0, "blockIO.throttleReadIOPSDevice", r.BlkioThrottleReadIOPSDevice},
			{len(r.BlkioThrottleWriteIOPSDevice) > 0, "blockIO.throttleWriteIOPSDevice", r.BlkioThrottleWriteIOPSDevice},
		}
	}, copyBlkio},
	{"blkio", "", func(r *configs.Resources) []field {
		leaf := slices.ContainsFunc(r.BlkioWeightDevice, func(w configs.WeightDevice) bool { return w.LeafWeight != 0 })
		return []field{
			{r.BlkioLeafWeight != 0, "blockIO.leafWeight", r.BlkioLeafWeight},
			{leaf, "blockIO.weightDevice[].leafWeight", r.BlkioWeightDevice},
		}
	}, func(d *cgroups.Resources, r *configs.Resources) { d.BlkioLeafWeight = r.BlkioLeafWeight }},
	{"hugetlb", "hugetlb", func(r *configs.Resources) []field {
		return []field{{len(r.HugetlbLimit) > 0, "hugepageLimits", r.HugetlbLimit}}
	}, func(d *cgroups.Resources, r *configs.Resources) {
		for _, h := range r.HugetlbLimit {
			d.HugetlbLimit = append(d.HugetlbLimit, &cgroups.HugepageLimit{Pagesize: h.Pagesize, Limit: h.Limit})
		}
	}},
	{"net_cls", "", func(r *configs.Resources) []field {
		return []field{{r.NetClsClassid != 0, "network.classID", r.NetClsClassid}}
	}, func(d *cgroups.Resources, r *configs.Resources) { d.NetClsClassid = r.NetClsClassid }},
	{"net_prio", "", func(r *configs.Resources) []field {
		return []field{{len(r.NetPrioIfpriomap) > 0, "network.priorities", r.NetPrioIfpriomap}}
	}, func(d *cgroups.Resources, r *configs.Resources) {
		for _, p := range r.NetPrioIfpriomap {
			d.NetPrioIfpriomap = append(d.NetPrioIfpriomap, &cgroups.IfPrioMap{Interface: p.Interface, Priority: int64(p.Priority)})
		}
	}},
	{"rdma", "rdma", func(r *configs.Resources) []field {
		return []field{{len(r.Rdma) > 0, "rdma", r.Rdma}}
	}, func(d *cgroups.Resources, r *configs.Resources) {
		d.Rdma = map[string]cgroups.LinuxRdma{}
		for dev, l := range r.Rdma {
			d.Rdma[dev] = cgroups.LinuxRdma{HcaHandles: l.HcaHandles, HcaObjects: l.HcaObjects}
		}
	}},
}

func copyBlkio(d *cgroups.Resources, r *configs.Resources) {
	d.BlkioWeight = r.BlkioWeight
	for _, w := range r.BlkioWeightDevice {
		d.BlkioWeightDevice = append(d.BlkioWeightDevice, cgroups.NewWeightDevice(w.Major, w.Minor, w.Weight, w.LeafWeight))
	}
	for _, l := range []struct {
		dst *[]*cgroups.ThrottleDevice
		src []configs.ThrottleDevice
	}{
		{&d.BlkioThrottleReadBpsDevice, r.BlkioThrottleReadBpsDevice},
		{&d.BlkioThrottleWriteBpsDevice, r.BlkioThrottleWriteBpsDevice},
		{&d.BlkioThrottleReadIOPSDevice, r.BlkioThrottleReadIOPSDevice},
		{&d.BlkioThrottleWriteIOPSDevice, r.BlkioThrottleWriteIOPSDevice},
	} {
		for _, t := range l.src {
			*l.dst = append(*l.dst, cgroups.NewThrottleDevice(t.Major, t.Minor, t.Rate))
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// route splits r between the v1 hierarchies and the unified one, by
// which has each controller, and refuses what neither has. v2used says
// whether the unified part has anything to write.
func (m *Manager) route(r *configs.Resources) (v1res, v2res *cgroups.Resources, v2used bool, err error) {
	v1res, v2res = &cgroups.Resources{}, &cgroups.Resources{}
	for _, g := range groups {
		field, value := g.first(r)
		if field == "" {
			continue
		}
		dst, err := m.place(g, field, value)
		if err != nil {
			return nil, nil, false, err
		}
		if dst == "v1" {
			g.copy(v1res, r)
		} else {
			g.copy(v2res, r)
			v2used = true
		}
	}
	if err := checkHugepages(r); err != nil {
		return nil, nil, false, err
	}
	if err := m.routeUnified(r, v2res); err != nil {
		return nil, nil, false, err
	}
	v2used = v2used || len(v2res.Unified) > 0
	rules, err := deviceRules(r.Devices)
	if err != nil {
		return nil, nil, false, err
	}
	if m.layout == V2 {
		v2res.Devices = rules
		v1res.SkipDevices = true
	} else {
		v1res.Devices = rules
		v2res.SkipDevices = true
	}
	return v1res, v2res, v2used, nil
}

// place says which hierarchy serves group g ("v1" or "v2"), or why none.
func (m *Manager) place(g group, field string, value any) (string, error) {
	if m.hasV1(g.v1) {
		return "v1", nil
	}
	if m.layout != V1 && g.v2 != "" && m.unified[g.v2] {
		return "v2", nil
	}
	switch {
	case m.layout == V2 && g.v2 == "":
		return "", fmt.Errorf("%s: %v: cgroup v2 (this host) has no such setting (it is cgroup v1's %s)", field, show(value), g.v1)
	case m.layout == V2:
		return "", fmt.Errorf("%s: %v: the %s controller is not available on this host (cgroup v2)", field, show(value), g.v2)
	}
	return "", fmt.Errorf("%s: %v: the %s controller is not available on this host (cgroup %s)", field, show(value), g.v1, m.layout)
}

// checkHugepages refuses a page size the kernel does not have.
func checkHugepages(r *configs.Resources) error {
	sizes := cgroups.HugePageSizes()
	for i, h := range r.HugetlbLimit {
		if !slices.Contains(sizes, h.Pagesize) {
			return fmt.Errorf("%shugepageLimits[%d].pageSize: %q: this host has huge pages of %s only", res, i, h.Pagesize, strings.Join(sizes, ", "))
		}
	}
	return nil
}

// routeUnified puts linux.resources.unified in v2res: on V2 all of it,
// on a hybrid host the keys of the controllers the unified hierarchy has.
func (m *Manager) routeUnified(r *configs.Resources, v2res *cgroups.Resources) error {
	if len(r.Unified) == 0 {
		return nil
	}
	if m.layout == V1 {
		return fmt.Errorf("%sunified: needs cgroup v2; this host has cgroup v1 only", res)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Unified)) {
		field := fmt.Sprintf("%sunified[%q]", res, k)
		ctrl, _, ok := strings.Cut(k, ".")
		if !ok || strings.Contains(k, "/") {
			return fmt.Errorf("%s: not a cgroup v2 file name (controller.setting)", field)
		}
		if m.layout == Hybrid && ctrl != "cgroup" && !m.unified[ctrl] {
			return fmt.Errorf("%s: %q: the %s controller is not in this host's unified hierarchy (it is a cgroup v1 controller here or missing)", field, r.Unified[k], ctrl)
		}
	}
	v2res.Unified = maps.Clone(r.Unified)
	return nil
}
