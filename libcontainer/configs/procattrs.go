package configs

// The process attributes the launcher applies just before it execs the
// process (nsenter/attrs.c), all checked and in kernel units.

// Scheduler is process.scheduler, the argument of sched_setattr(2).
type Scheduler struct {
	Policy   uint32 `json:"policy"` // SCHED_*
	Flags    uint64 `json:"flags,omitempty"`
	Nice     int32  `json:"nice,omitempty"`
	Priority uint32 `json:"priority,omitempty"`
	Runtime  uint64 `json:"runtime,omitempty"`
	Deadline uint64 `json:"deadline,omitempty"`
	Period   uint64 `json:"period,omitempty"`
}

// IOPriority is process.ioPriority, for ioprio_set(2).
type IOPriority struct {
	Class    int `json:"class"` // IOPRIO_CLASS_RT (1), _BE (2) or _IDLE (3)
	Priority int `json:"priority"`
}

// CPUAffinity is process.execCPUAffinity as CPU numbers; an empty list
// leaves the affinity as it is.
type CPUAffinity struct {
	Initial []int `json:"initial,omitempty"`
	Final   []int `json:"final,omitempty"`
}

// Personality is linux.personality, the argument of personality(2).
type Personality struct {
	Persona uint32 `json:"persona"` // PER_LINUX or PER_LINUX32
}

// MemoryPolicy is linux.memoryPolicy, for set_mempolicy(2).
type MemoryPolicy struct {
	Mode  int   `json:"mode"`  // MPOL_*
	Flags int   `json:"flags"` // MPOL_F_* mode flags
	Nodes []int `json:"nodes,omitempty"`
}

// NetDevice is one entry of linux.netDevices: the host device moves into
// the container's network namespace, renamed to Name (its own name when
// empty).
type NetDevice struct {
	Name string `json:"name,omitempty"`
}

// IntelRdt is linux.intelRdt; husk refuses it (see lsm.go).
type IntelRdt struct {
	ClosID string `json:"clos_id,omitempty"`
}
