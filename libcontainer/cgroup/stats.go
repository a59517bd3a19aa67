package cgroup

import (
	"fmt"

	"github.com/opencontainers/cgroups"
)

// Stats are a container's cgroup statistics in the JSON shape of runc's
// `events` (the "data" of a "stats" event), which callers parse.
type Stats struct {
	CPU     CPU                `json:"cpu"`
	CPUSet  CPUSet             `json:"cpuset"`
	Memory  Memory             `json:"memory"`
	Pids    Pids               `json:"pids"`
	Blkio   Blkio              `json:"blkio"`
	Hugetlb map[string]Hugetlb `json:"hugetlb"`
	// IntelRdt and NetworkInterfaces are runc's too; husk has neither.
	IntelRdt          struct{} `json:"intel_rdt"`
	NetworkInterfaces []any    `json:"network_interfaces"`
}

type PSIData struct {
	Avg10  float64 `json:"avg10"`
	Avg60  float64 `json:"avg60"`
	Avg300 float64 `json:"avg300"`
	Total  uint64  `json:"total"`
}

type PSIStats struct {
	Some PSIData `json:"some,omitempty"`
	Full PSIData `json:"full,omitempty"`
}

type Hugetlb struct {
	Usage   uint64 `json:"usage,omitempty"`
	Max     uint64 `json:"max,omitempty"`
	Failcnt uint64 `json:"failcnt"`
}

type BlkioEntry struct {
	Major uint64 `json:"major,omitempty"`
	Minor uint64 `json:"minor,omitempty"`
	Op    string `json:"op,omitempty"`
	Value uint64 `json:"value,omitempty"`
}

type Blkio struct {
	IoServiceBytesRecursive []BlkioEntry `json:"ioServiceBytesRecursive,omitempty"`
	IoServicedRecursive     []BlkioEntry `json:"ioServicedRecursive,omitempty"`
	IoQueuedRecursive       []BlkioEntry `json:"ioQueueRecursive,omitempty"`
	IoServiceTimeRecursive  []BlkioEntry `json:"ioServiceTimeRecursive,omitempty"`
	IoWaitTimeRecursive     []BlkioEntry `json:"ioWaitTimeRecursive,omitempty"`
	IoMergedRecursive       []BlkioEntry `json:"ioMergedRecursive,omitempty"`
	IoTimeRecursive         []BlkioEntry `json:"ioTimeRecursive,omitempty"`
	SectorsRecursive        []BlkioEntry `json:"sectorsRecursive,omitempty"`
	PSI                     *PSIStats    `json:"psi,omitempty"`
}

type Pids struct {
	Current uint64 `json:"current,omitempty"`
	Limit   uint64 `json:"limit,omitempty"`
}

type Throttling struct {
	Periods          uint64 `json:"periods,omitempty"`
	ThrottledPeriods uint64 `json:"throttledPeriods,omitempty"`
	ThrottledTime    uint64 `json:"throttledTime,omitempty"`
}

// CPUUsage is in nanoseconds.
type CPUUsage struct {
	Total        uint64   `json:"total,omitempty"`
	Percpu       []uint64 `json:"percpu,omitempty"`
	PercpuKernel []uint64 `json:"percpu_kernel,omitempty"`
	PercpuUser   []uint64 `json:"percpu_user,omitempty"`
	Kernel       uint64   `json:"kernel"`
	User         uint64   `json:"user"`
}

type CPU struct {
	Usage      CPUUsage   `json:"usage,omitempty"`
	Throttling Throttling `json:"throttling,omitempty"`
	PSI        *PSIStats  `json:"psi,omitempty"`
}

type CPUSet struct {
	CPUs                  []uint16 `json:"cpus,omitempty"`
	CPUExclusive          uint64   `json:"cpu_exclusive"`
	Mems                  []uint16 `json:"mems,omitempty"`
	MemHardwall           uint64   `json:"mem_hardwall"`
	MemExclusive          uint64   `json:"mem_exclusive"`
	MemoryMigrate         uint64   `json:"memory_migrate"`
	MemorySpreadPage      uint64   `json:"memory_spread_page"`
	MemorySpreadSlab      uint64   `json:"memory_spread_slab"`
	MemoryPressure        uint64   `json:"memory_pressure"`
	SchedLoadBalance      uint64   `json:"sched_load_balance"`
	SchedRelaxDomainLevel int64    `json:"sched_relax_domain_level"`
}

type MemoryEntry struct {
	Limit   uint64 `json:"limit"`
	Usage   uint64 `json:"usage,omitempty"`
	Max     uint64 `json:"max,omitempty"`
	Failcnt uint64 `json:"failcnt"`
}

type Memory struct {
	Cache     uint64            `json:"cache,omitempty"`
	Usage     MemoryEntry       `json:"usage,omitempty"`
	Swap      MemoryEntry       `json:"swap,omitempty"`
	Kernel    MemoryEntry       `json:"kernel,omitempty"`
	KernelTCP MemoryEntry       `json:"kernelTCP,omitempty"`
	Raw       map[string]uint64 `json:"raw,omitempty"`
	PSI       *PSIStats         `json:"psi,omitempty"`
}

// Stats reads the container's statistics from every hierarchy.
func (m *Manager) Stats() (*Stats, error) {
	var st *cgroups.Stats
	var err error
	if m.v1 != nil {
		st, err = m.v1.GetStats()
		if err == nil && m.layout == Hybrid {
			err = m.addUnifiedStats(st)
		}
	} else {
		st, err = m.v2.GetStats()
	}
	if err != nil {
		return nil, fmt.Errorf("statistics of cgroup %s: %w", m.describe(), err)
	}
	return convertStats(st), nil
}

// addUnifiedStats adds the statistics of the controllers that only the
// unified hierarchy has (hugetlb on many hybrid hosts).
func (m *Manager) addUnifiedStats(st *cgroups.Stats) error {
	var want cgroups.Controller
	for name, c := range map[string]cgroups.Controller{
		"hugetlb": cgroups.HugeTLB, "rdma": cgroups.RDMA, "pids": cgroups.Pids,
		"memory": cgroups.Memory, "cpu": cgroups.CPU, "io": cgroups.IO, "misc": cgroups.Misc,
	} {
		v1name := name
		if name == "io" {
			v1name = "blkio"
		}
		if m.unified[name] && !m.hasV1(v1name) {
			want |= c
		}
	}
	if want == 0 {
		return nil
	}
	u, err := m.v2.Stats(&cgroups.StatsOptions{Controllers: want})
	if err != nil {
		return err
	}
	if want&cgroups.HugeTLB != 0 {
		st.HugetlbStats = u.HugetlbStats
	}
	if want&cgroups.Pids != 0 {
		st.PidsStats = u.PidsStats
	}
	if want&cgroups.Memory != 0 {
		st.MemoryStats = u.MemoryStats
	}
	if want&cgroups.CPU != 0 {
		st.CpuStats = u.CpuStats
	}
	if want&cgroups.IO != 0 {
		st.BlkioStats = u.BlkioStats
	}
	if want&cgroups.RDMA != 0 {
		st.RdmaStats = u.RdmaStats
	}
	return nil
}

func convertStats(s *cgroups.Stats) *Stats {
	out := &Stats{Hugetlb: map[string]Hugetlb{}, NetworkInterfaces: []any{}}
	cu := s.CpuStats.CpuUsage
	out.CPU = CPU{
		Usage: CPUUsage{
			Total: cu.TotalUsage, Percpu: cu.PercpuUsage,
			PercpuKernel: cu.PercpuUsageInKernelmode, PercpuUser: cu.PercpuUsageInUsermode,
			Kernel: cu.UsageInKernelmode, User: cu.UsageInUsermode,
		},
		Throttling: Throttling{
			Periods:          s.CpuStats.ThrottlingData.Periods,
			ThrottledPeriods: s.CpuStats.ThrottlingData.ThrottledPeriods,
			ThrottledTime:    s.CpuStats.ThrottlingData.ThrottledTime,
		},
		PSI: convertPSI(s.CpuStats.PSI),
	}
	cs := s.CPUSetStats
	out.CPUSet = CPUSet{
		CPUs: cs.CPUs, CPUExclusive: cs.CPUExclusive, Mems: cs.Mems, MemHardwall: cs.MemHardwall,
		MemExclusive: cs.MemExclusive, MemoryMigrate: cs.MemoryMigrate, MemorySpreadPage: cs.MemorySpreadPage,
		MemorySpreadSlab: cs.MemorySpreadSlab, MemoryPressure: cs.MemoryPressure,
		SchedLoadBalance: cs.SchedLoadBalance, SchedRelaxDomainLevel: cs.SchedRelaxDomainLevel,
	}
	ms := s.MemoryStats
	out.Memory = Memory{
		Cache:     ms.Cache,
		Usage:     memoryEntry(ms.Usage),
		Swap:      memoryEntry(ms.SwapUsage),
		Kernel:    memoryEntry(ms.KernelUsage),
		KernelTCP: memoryEntry(ms.KernelTCPUsage),
		Raw:       ms.Stats,
		PSI:       convertPSI(ms.PSI),
	}
	out.Pids = Pids{Current: s.PidsStats.Current, Limit: s.PidsStats.Limit}
	b := s.BlkioStats
	out.Blkio = Blkio{
		IoServiceBytesRecursive: blkioEntries(b.IoServiceBytesRecursive),
		IoServicedRecursive:     blkioEntries(b.IoServicedRecursive),
		IoQueuedRecursive:       blkioEntries(b.IoQueuedRecursive),
		IoServiceTimeRecursive:  blkioEntries(b.IoServiceTimeRecursive),
		IoWaitTimeRecursive:     blkioEntries(b.IoWaitTimeRecursive),
		IoMergedRecursive:       blkioEntries(b.IoMergedRecursive),
		IoTimeRecursive:         blkioEntries(b.IoTimeRecursive),
		SectorsRecursive:        blkioEntries(b.SectorsRecursive),
		PSI:                     convertPSI(b.PSI),
	}
	for size, h := range s.HugetlbStats {
		out.Hugetlb[size] = Hugetlb{Usage: h.Usage, Max: h.MaxUsage, Failcnt: h.Failcnt}
	}
	return out
}

func memoryEntry(d cgroups.MemoryData) MemoryEntry {
	return MemoryEntry{Limit: d.Limit, Usage: d.Usage, Max: d.MaxUsage, Failcnt: d.Failcnt}
}

func blkioEntries(in []cgroups.BlkioStatEntry) []BlkioEntry {
	out := make([]BlkioEntry, 0, len(in))
	for _, e := range in {
		out = append(out, BlkioEntry{Major: e.Major, Minor: e.Minor, Op: e.Op, Value: e.Value})
	}
	return out
}

func convertPSI(p *cgroups.PSIStats) *PSIStats {
	if p == nil {
		return nil
	}
	conv := func(d cgroups.PSIData) PSIData {
		return PSIData{Avg10: d.Avg10, Avg60: d.Avg60, Avg300: d.Avg300, Total: d.Total}
	}
	return &PSIStats{Some: conv(p.Some), Full: conv(p.Full)}
}
