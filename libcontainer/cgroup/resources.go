package cgroup

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	"github.com/sirupsen/logrus"
)

// Set applies r, all of it, device rules included, and the
// memory.kernelTCP given to New: at create time.
func (m *Manager) Set(r *configs.Resources) error {
	if err := m.setKernelTCP(); err != nil {
		return err
	}
	return m.set(r, nil, false)
}

// SetLimits applies r but its device rules: at create time, for a caller
// without root on the host, who cannot write them.
func (m *Manager) SetLimits(r *configs.Resources) error {
	return m.set(r, nil, true)
}

// setKernelTCP writes memory.kernelTCP to v1's
// memory.kmem.tcp.limit_in_bytes, and refuses it where the container's
// memory cgroup has no such file (cgroup v2, or a kernel without it).
func (m *Manager) setKernelTCP() error {
	if m.kernelTCP == 0 {
		return nil
	}
	const file = "memory.kmem.tcp.limit_in_bytes"
	field := res + "memory.kernelTCP"
	dir := m.v1Path("memory")
	if dir == "" {
		return fmt.Errorf("%s: %d: cgroup %s (this host's memory controller) has no kernel TCP memory limit (cgroup v1's %s)", field, m.kernelTCP, m.layout, file)
	}
	if !cgroups.PathExists(filepath.Join(dir, file)) {
		return fmt.Errorf("%s: %d: this kernel has no %s", field, m.kernelTCP, file)
	}
	if err := cgroups.WriteFile(dir, file, strconv.FormatInt(m.kernelTCP, 10)); err != nil {
		return fmt.Errorf("%s: %d: %w", field, m.kernelTCP, err)
	}
	return nil
}

// Update changes a running container's limits from prev, those it has,
// to r. Only what changes is written (a setting whose value stays is not
// written again: cpu.shares of an idle group, for one, would be refused),
// each with what the kernel takes with it (see groups). Device rules are
// left as they are (as runc's update does): rewriting them would briefly
// deny devices the container has open.
func (m *Manager) Update(prev, r *configs.Resources) error {
	return m.set(r, prev, true)
}

// set applies r; with prev, only the groups of settings that differ from
// prev's.
func (m *Manager) set(r, prev *configs.Resources, skipDevices bool) error {
	if err := m.ensureRtBudget(r); err != nil {
		return err
	}
	v1res, v2res, v2used, err := m.route(r, prev)
	if err != nil {
		return err
	}
	if v2res.CpuShares != 0 { // fs2 leaves the conversion to its caller
		v2res.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(v2res.CpuShares)
	}
	dropIdleWeight(v1res)
	dropIdleWeight(v2res)
	v1res.SkipDevices = v1res.SkipDevices || skipDevices
	v2res.SkipDevices = v2res.SkipDevices || skipDevices
	if err := m.leaveIdle(v1res); err != nil {
		return explain(r, err)
	}
	if err := m.writeDeviceRules(v1res); err != nil {
		return err
	}
	if m.v1 != nil {
		if err := m.v1.Set(v1res); err != nil {
			return explain(r, err)
		}
	}
	if m.layout == Hybrid && v2used {
		if err := m.enableUnified(); err != nil {
			return err
		}
	}
	if m.v2 != nil && (m.layout == V2 || v2used) {
		if err := checkWeightDevice(m.v2.Path(""), v2res); err != nil {
			return err
		}
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
	copy   func(dst, r *configs.Resources)    // the group's fields from r to dst
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

// same reports whether a and b have the same settings of g.
func (g group) same(a, b *configs.Resources) bool {
	return reflect.DeepEqual(g.fields(a), g.fields(b))
}

// changedUnified is r with only the linux.resources.unified keys whose
// value is not prev's (all of them without prev).
func changedUnified(r, prev *configs.Resources) *configs.Resources {
	if prev == nil || len(r.Unified) == 0 {
		return r
	}
	out := *r
	out.Unified = map[string]string{}
	for k, v := range r.Unified {
		if old, ok := prev.Unified[k]; !ok || old != v {
			out.Unified[k] = v
		}
	}
	return &out
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
	}, func(d, r *configs.Resources) {
		d.Memory, d.MemoryReservation, d.MemorySwap = r.Memory, r.MemoryReservation, r.MemorySwap
		d.MemoryCheckBeforeUpdate = r.MemoryCheckBeforeUpdate
	}},
	{"memory", "", func(r *configs.Resources) []field {
		return []field{{r.MemorySwappiness != nil, "memory.swappiness", deref(r.MemorySwappiness)}}
	}, func(d, r *configs.Resources) { d.MemorySwappiness = r.MemorySwappiness }},
	{"memory", "", func(r *configs.Resources) []field {
		return []field{{r.OomKillDisable, "memory.disableOOMKiller", true}}
	}, func(d, r *configs.Resources) { d.OomKillDisable = r.OomKillDisable }},
	// The weight and cpu.idle go together: leaving idle resets the
	// weight, which is then written again.
	{"cpu", "cpu", func(r *configs.Resources) []field {
		return []field{
			{r.CpuShares != 0, "cpu.shares", r.CpuShares},
			{r.CPUIdle != nil, "cpu.idle", deref(r.CPUIdle)},
		}
	}, func(d, r *configs.Resources) { d.CpuShares, d.CPUIdle = r.CpuShares, r.CPUIdle }},
	// v2's cpu.max holds the quota and the period together.
	{"cpu", "cpu", func(r *configs.Resources) []field {
		return []field{
			{r.CpuQuota != 0, "cpu.quota", r.CpuQuota},
			{r.CpuPeriod != 0, "cpu.period", r.CpuPeriod},
			{r.CpuBurst != nil, "cpu.burst", deref(r.CpuBurst)},
		}
	}, func(d, r *configs.Resources) {
		d.CpuQuota, d.CpuPeriod, d.CpuBurst = r.CpuQuota, r.CpuPeriod, r.CpuBurst
	}},
	{"cpu", "", func(r *configs.Resources) []field {
		return []field{
			{r.CpuRtRuntime != 0, "cpu.realtimeRuntime", r.CpuRtRuntime},
			{r.CpuRtPeriod != 0, "cpu.realtimePeriod", r.CpuRtPeriod},
		}
	}, func(d, r *configs.Resources) { d.CpuRtRuntime, d.CpuRtPeriod = r.CpuRtRuntime, r.CpuRtPeriod }},
	{"cpuset", "cpuset", func(r *configs.Resources) []field {
		return []field{
			{r.CpusetCpus != "", "cpu.cpus", r.CpusetCpus},
			{r.CpusetMems != "", "cpu.mems", r.CpusetMems},
		}
	}, func(d, r *configs.Resources) { d.CpusetCpus, d.CpusetMems = r.CpusetCpus, r.CpusetMems }},
	{"pids", "pids", func(r *configs.Resources) []field {
		return []field{{r.PidsLimit != nil, "pids.limit", deref(r.PidsLimit)}}
	}, func(d, r *configs.Resources) { d.PidsLimit = r.PidsLimit }},
	{"blkio", "io", func(r *configs.Resources) []field {
		return []field{
			{r.BlkioWeight != 0, "blockIO.weight", r.BlkioWeight},
			{len(r.BlkioWeightDevice) > 0, "blockIO.weightDevice", r.BlkioWeightDevice},
			{len(r.BlkioThrottleReadBpsDevice) > 0, "blockIO.throttleReadBpsDevice", r.BlkioThrottleReadBpsDevice},
			{len(r.BlkioThrottleWriteBpsDevice) > 0, "blockIO.throttleWriteBpsDevice", r.BlkioThrottleWriteBpsDevice},
			{len(r.BlkioThrottleReadIOPSDevice) > 0, "blockIO.throttleReadIOPSDevice", r.BlkioThrottleReadIOPSDevice},
			{len(r.BlkioThrottleWriteIOPSDevice) > 0, "blockIO.throttleWriteIOPSDevice", r.BlkioThrottleWriteIOPSDevice},
		}
	}, func(d, r *configs.Resources) {
		d.BlkioWeight, d.BlkioWeightDevice = r.BlkioWeight, r.BlkioWeightDevice
		d.BlkioThrottleReadBpsDevice, d.BlkioThrottleWriteBpsDevice = r.BlkioThrottleReadBpsDevice, r.BlkioThrottleWriteBpsDevice
		d.BlkioThrottleReadIOPSDevice, d.BlkioThrottleWriteIOPSDevice = r.BlkioThrottleReadIOPSDevice, r.BlkioThrottleWriteIOPSDevice
	}},
	{"blkio", "", func(r *configs.Resources) []field {
		leaf := slices.ContainsFunc(r.BlkioWeightDevice, func(w *cgroups.WeightDevice) bool { return w.LeafWeight != 0 })
		return []field{
			{r.BlkioLeafWeight != 0, "blockIO.leafWeight", r.BlkioLeafWeight},
			{leaf, "blockIO.weightDevice[].leafWeight", r.BlkioWeightDevice},
		}
	}, func(d, r *configs.Resources) { d.BlkioLeafWeight = r.BlkioLeafWeight }},
	{"hugetlb", "hugetlb", func(r *configs.Resources) []field {
		return []field{{len(r.HugetlbLimit) > 0, "hugepageLimits", r.HugetlbLimit}}
	}, func(d, r *configs.Resources) { d.HugetlbLimit = r.HugetlbLimit }},
	{"net_cls", "", func(r *configs.Resources) []field {
		return []field{{r.NetClsClassid != 0, "network.classID", r.NetClsClassid}}
	}, func(d, r *configs.Resources) { d.NetClsClassid = r.NetClsClassid }},
	{"net_prio", "", func(r *configs.Resources) []field {
		return []field{{len(r.NetPrioIfpriomap) > 0, "network.priorities", r.NetPrioIfpriomap}}
	}, func(d, r *configs.Resources) { d.NetPrioIfpriomap = r.NetPrioIfpriomap }},
	{"rdma", "rdma", func(r *configs.Resources) []field {
		return []field{{len(r.Rdma) > 0, "rdma", r.Rdma}}
	}, func(d, r *configs.Resources) { d.Rdma = r.Rdma }},
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// route splits r between the v1 hierarchies and the unified one, by
// which has each controller, and refuses what neither has; with prev, it
// leaves out the groups whose settings are prev's. v2used says whether
// the unified part has anything to write.
func (m *Manager) route(r, prev *configs.Resources) (v1res, v2res *cgroups.Resources, v2used bool, err error) {
	v1res, v2res = &cgroups.Resources{}, &cgroups.Resources{}
	for _, g := range groups {
		field, value := g.first(r)
		if field == "" || (prev != nil && g.same(prev, r)) {
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
	if err := m.routeUnified(changedUnified(r, prev), v2res); err != nil {
		return nil, nil, false, err
	}
	v2used = v2used || len(v2res.Unified) > 0
	if err := checkDeviceRules(r.Devices); err != nil {
		return nil, nil, false, err
	}
	rules := r.Devices
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

// leaveIdle writes cpu.idle 0 first on v1, when r turns it off: the
// library writes cpu.shares before cpu.idle there, and the kernel refuses
// shares for a group that is still idle (EINVAL). On v2 the library
// writes cpu.idle first.
func (m *Manager) leaveIdle(v1res *cgroups.Resources) error {
	dir := m.v1Path("cpu")
	if dir == "" || v1res.CPUIdle == nil || *v1res.CPUIdle != 0 {
		return nil
	}
	return cgroups.WriteFile(dir, "cpu.idle", "0")
}

// dropIdleWeight writes no weight (v1's cpu.shares, v2's cpu.weight)
// while cpu.idle is 1: the kernel fixes an idle group's weight and
// refuses a write to it (EINVAL), and resets the weight when cpu.idle
// goes back to 0. The weight from cpu.shares is written by the update
// that turns cpu.idle to 0 (update keeps the container's other limits).
func dropIdleWeight(r *cgroups.Resources) {
	if r.CPUIdle == nil || *r.CPUIdle != 1 || (r.CpuShares == 0 && r.CpuWeight == 0) {
		return
	}
	logrus.Debugf("%scpu.shares: %d: not written while cpu.idle is 1 (an idle group's weight is the kernel's)", res, r.CpuShares)
	r.CpuShares, r.CpuWeight = 0, 0
}

// checkWeightDevice refuses blockIO.weightDevice on v2 where the kernel
// has no per-device weights: they exist only in the BFQ scheduler's
// io.bfq.weight ("default N" then "MAJ:MIN N" lines, kernel 5.4+), and
// the library would skip them without a word.
func checkWeightDevice(dir string, v2res *cgroups.Resources) error {
	if len(v2res.BlkioWeightDevice) == 0 {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "io.bfq.weight"))
	if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), "default") {
		return nil
	}
	var devs []string
	for _, w := range v2res.BlkioWeightDevice {
		devs = append(devs, fmt.Sprintf("%d:%d weight %d", w.Major, w.Minor, w.Weight))
	}
	return fmt.Errorf("%sblockIO.weightDevice: %s: cgroup v2 has per-device I/O weights only with the BFQ scheduler (io.bfq.weight), which this host has not loaded", res, strings.Join(devs, ", "))
}
