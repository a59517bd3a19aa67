package configs

// Cgroup is where the container's cgroups are and what they limit, from
// linux.cgroupsPath and linux.resources. A nil Config.Cgroup means neither
// was given: the default path, no limits, the default device rules.
type Cgroup struct {
	// Path is linux.cgroupsPath, cleaned: absolute (from the root of every
	// hierarchy), relative (to husk's own cgroup) or empty (husk's
	// default, /husk/<id>).
	Path      string    `json:"path,omitempty"`
	Resources Resources `json:"resources"`
}

// Resources are the limits of linux.resources. A zero value leaves the
// kernel's default; pointers tell "not set" from an explicit zero.
type Resources struct {
	// Devices are the device access rules in order, the last matching
	// one deciding; everything starts denied.
	Devices []DeviceRule `json:"devices,omitempty"`

	Memory            int64   `json:"memory,omitempty"`             // bytes; -1 unlimited
	MemoryReservation int64   `json:"memory_reservation,omitempty"` // bytes
	MemorySwap        int64   `json:"memory_swap,omitempty"`        // memory+swap bytes; -1 unlimited
	MemorySwappiness  *uint64 `json:"memory_swappiness,omitempty"`
	OomKillDisable    bool    `json:"oom_kill_disable,omitempty"`
	// MemoryCheckBeforeUpdate refuses an update below current usage (v2).
	MemoryCheckBeforeUpdate bool `json:"memory_check_before_update,omitempty"`

	CPUShares    uint64  `json:"cpu_shares,omitempty"`
	CPUQuota     int64   `json:"cpu_quota,omitempty"`  // µs per period; -1 unlimited
	CPUPeriod    uint64  `json:"cpu_period,omitempty"` // µs
	CPUBurst     *uint64 `json:"cpu_burst,omitempty"`  // µs
	CPURtRuntime int64   `json:"cpu_rt_runtime,omitempty"`
	CPURtPeriod  uint64  `json:"cpu_rt_period,omitempty"`
	CPUIdle      *int64  `json:"cpu_idle,omitempty"`
	CpusetCpus   string  `json:"cpuset_cpus,omitempty"`
	CpusetMems   string  `json:"cpuset_mems,omitempty"`

	PidsLimit *int64 `json:"pids_limit,omitempty"` // <= 0: unlimited

	BlkioWeight                  uint16           `json:"blkio_weight,omitempty"`
	BlkioLeafWeight              uint16           `json:"blkio_leaf_weight,omitempty"`
	BlkioWeightDevice            []WeightDevice   `json:"blkio_weight_device,omitempty"`
	BlkioThrottleReadBpsDevice   []ThrottleDevice `json:"blkio_throttle_read_bps_device,omitempty"`
	BlkioThrottleWriteBpsDevice  []ThrottleDevice `json:"blkio_throttle_write_bps_device,omitempty"`
	BlkioThrottleReadIOPSDevice  []ThrottleDevice `json:"blkio_throttle_read_iops_device,omitempty"`
	BlkioThrottleWriteIOPSDevice []ThrottleDevice `json:"blkio_throttle_write_iops_device,omitempty"`

	HugetlbLimit []HugepageLimit `json:"hugetlb_limit,omitempty"`

	NetClsClassid    uint32       `json:"net_cls_classid,omitempty"`
	NetPrioIfpriomap []IfPriority `json:"net_prio_ifpriomap,omitempty"`

	Rdma map[string]RdmaLimit `json:"rdma,omitempty"`

	// Unified are cgroup v2 file names and the values written to them.
	Unified map[string]string `json:"unified,omitempty"`
}

// Wildcard as a device rule's major or minor matches every number.
const Wildcard int64 = -1

// DeviceRule allows or denies access to devices. Type is 'a' (all), 'c'
// or 'b'; Access is a subset of "rwm".
type DeviceRule struct {
	Type   rune   `json:"type"`
	Major  int64  `json:"major"`
	Minor  int64  `json:"minor"`
	Access string `json:"access"`
	Allow  bool   `json:"allow"`
}

// WeightDevice is a per-device block I/O weight.
type WeightDevice struct {
	Major      int64  `json:"major"`
	Minor      int64  `json:"minor"`
	Weight     uint16 `json:"weight,omitempty"`
	LeafWeight uint16 `json:"leaf_weight,omitempty"`
}

// ThrottleDevice is a per-device block I/O rate limit.
type ThrottleDevice struct {
	Major int64  `json:"major"`
	Minor int64  `json:"minor"`
	Rate  uint64 `json:"rate"`
}

// HugepageLimit limits the huge pages of one size ("2MB", "1GB").
type HugepageLimit struct {
	Pagesize string `json:"page_size"`
	Limit    uint64 `json:"limit"`
}

// IfPriority is the network priority of traffic through one interface.
type IfPriority struct {
	Interface string `json:"interface"`
	Priority  uint32 `json:"priority"`
}

// RdmaLimit limits the RDMA handles and objects of one device.
type RdmaLimit struct {
	HcaHandles *uint32 `json:"hca_handles,omitempty"`
	HcaObjects *uint32 `json:"hca_objects,omitempty"`
}

// DefaultDeviceRules are appended after the rules of linux.resources, as
// runc does: mknod of any node (opening it is another matter), the OCI
// default devices, the pty devices and /dev/net/tun.
func DefaultDeviceRules() []DeviceRule {
	rw := func(major, minor int64) DeviceRule {
		return DeviceRule{Type: 'c', Major: major, Minor: minor, Access: "rwm", Allow: true}
	}
	return []DeviceRule{
		{Type: 'c', Major: Wildcard, Minor: Wildcard, Access: "m", Allow: true},
		{Type: 'b', Major: Wildcard, Minor: Wildcard, Access: "m", Allow: true},
		rw(1, 3),          // /dev/null
		rw(1, 5),          // /dev/zero
		rw(1, 7),          // /dev/full
		rw(1, 8),          // /dev/random
		rw(1, 9),          // /dev/urandom
		rw(5, 0),          // /dev/tty
		rw(5, 1),          // /dev/console
		rw(5, 2),          // /dev/ptmx
		rw(136, Wildcard), // /dev/pts/*
		rw(10, 200),       // /dev/net/tun
	}
}

// CgroupConfig is c's cgroup settings, the defaults when it has none.
func (c *Config) CgroupConfig() *Cgroup {
	if c.Cgroup != nil {
		return c.Cgroup
	}
	return &Cgroup{Resources: Resources{Devices: DefaultDeviceRules()}}
}
