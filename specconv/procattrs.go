package specconv

import (
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// schedPolicies maps process.scheduler.policy to SCHED_*. SCHED_ISO has a
// number but no kernel implements it: it is refused below.
var schedPolicies = map[specs.LinuxSchedulerPolicy]uint32{
	specs.SchedOther:    unix.SCHED_NORMAL,
	specs.SchedFIFO:     unix.SCHED_FIFO,
	specs.SchedRR:       unix.SCHED_RR,
	specs.SchedBatch:    unix.SCHED_BATCH,
	specs.SchedIdle:     unix.SCHED_IDLE,
	specs.SchedDeadline: unix.SCHED_DEADLINE,
}

// schedFlags maps process.scheduler.flags to SCHED_FLAG_*.
var schedFlags = map[specs.LinuxSchedulerFlag]uint64{
	specs.SchedFlagResetOnFork:  unix.SCHED_FLAG_RESET_ON_FORK,
	specs.SchedFlagReclaim:      unix.SCHED_FLAG_RECLAIM,
	specs.SchedFlagDLOverrun:    unix.SCHED_FLAG_DL_OVERRUN,
	specs.SchedFlagKeepPolicy:   unix.SCHED_FLAG_KEEP_POLICY,
	specs.SchedFlagKeepParams:   unix.SCHED_FLAG_KEEP_PARAMS,
	specs.SchedFlagUtilClampMin: unix.SCHED_FLAG_UTIL_CLAMP_MIN,
	specs.SchedFlagUtilClampMax: unix.SCHED_FLAG_UTIL_CLAMP_MAX,
}

// convertScheduler checks process.scheduler the way sched_setattr(2)
// would, so a bad value fails at create with the field's name.
func convertScheduler(s *specs.Scheduler) (*configs.Scheduler, error) {
	if s == nil {
		return nil, nil
	}
	const f = "process.scheduler"
	if s.Policy == specs.SchedISO {
		return nil, fieldErrorf(f+".policy", "%q is not implemented by Linux", s.Policy)
	}
	policy, ok := schedPolicies[s.Policy]
	if !ok {
		return nil, fieldErrorf(f+".policy", "unknown %q", s.Policy)
	}
	out := &configs.Scheduler{Policy: policy, Nice: s.Nice, Runtime: s.Runtime, Deadline: s.Deadline, Period: s.Period}
	if s.Nice < -20 || s.Nice > 19 {
		return nil, fieldErrorf(f+".nice", "must be between -20 and 19, got %d", s.Nice)
	}
	realtime := s.Policy == specs.SchedFIFO || s.Policy == specs.SchedRR
	switch {
	case realtime && (s.Priority < 1 || s.Priority > 99):
		return nil, fieldErrorf(f+".priority", "must be between 1 and 99 for %s, got %d", s.Policy, s.Priority)
	case !realtime && s.Priority != 0:
		return nil, fieldErrorf(f+".priority", "must be 0 for %s (only SCHED_FIFO and SCHED_RR have one), got %d", s.Policy, s.Priority)
	}
	out.Priority = uint32(s.Priority)
	if s.Policy == specs.SchedDeadline {
		switch {
		case s.Runtime == 0:
			return nil, fieldErrorf(f+".runtime", "must be set for SCHED_DEADLINE")
		case s.Deadline != 0 && s.Runtime > s.Deadline:
			return nil, fieldErrorf(f+".runtime", "%d is above the deadline %d", s.Runtime, s.Deadline)
		case s.Period != 0 && s.Deadline > s.Period:
			return nil, fieldErrorf(f+".deadline", "%d is above the period %d", s.Deadline, s.Period)
		}
	} else if s.Runtime != 0 || s.Deadline != 0 || s.Period != 0 {
		return nil, fieldErrorf(f, "runtime, deadline and period are only for SCHED_DEADLINE, not %s", s.Policy)
	}
	for i, name := range s.Flags {
		flag, ok := schedFlags[name]
		if !ok {
			return nil, fieldErrorf(index(f+".flags", i), "unknown %q", name)
		}
		out.Flags |= flag
	}
	return out, nil
}

// ioprioClasses maps process.ioPriority.class to IOPRIO_CLASS_*.
var ioprioClasses = map[specs.IOPriorityClass]int{
	specs.IOPRIO_CLASS_RT:   1,
	specs.IOPRIO_CLASS_BE:   2,
	specs.IOPRIO_CLASS_IDLE: 3,
}

func convertIOPriority(p *specs.LinuxIOPriority) (*configs.IOPriority, error) {
	if p == nil {
		return nil, nil
	}
	class, ok := ioprioClasses[p.Class]
	if !ok {
		return nil, fieldErrorf("process.ioPriority.class", "unknown %q", p.Class)
	}
	if p.Priority < 0 || p.Priority > 7 {
		return nil, fieldErrorf("process.ioPriority.priority", "must be between 0 and 7, got %d", p.Priority)
	}
	return &configs.IOPriority{Class: class, Priority: p.Priority}, nil
}

func convertCPUAffinity(a *specs.CPUAffinity) (*configs.CPUAffinity, error) {
	if a == nil {
		return nil, nil
	}
	out := &configs.CPUAffinity{}
	var err error
	if out.Initial, err = parseIDList(a.Initial); err != nil {
		return nil, fieldErrorf("process.execCPUAffinity.initial", "%v", err)
	}
	if out.Final, err = parseIDList(a.Final); err != nil {
		return nil, fieldErrorf("process.execCPUAffinity.final", "%v", err)
	}
	return out, nil
}

// personality sets linux.personality. The runtime-spec defines no flags.
func (c *converter) personality() error {
	p := c.linux().Personality
	if p == nil {
		return nil
	}
	var persona uint32
	switch p.Domain {
	case specs.PerLinux:
		persona = 0x0000 // PER_LINUX
	case specs.PerLinux32:
		persona = 0x0008 // PER_LINUX32
	default:
		return fieldErrorf("linux.personality.domain", "unknown %q (LINUX or LINUX32)", p.Domain)
	}
	if len(p.Flags) > 0 {
		return fieldErrorf("linux.personality.flags[0]", "unknown %q: the runtime-spec defines no personality flags", p.Flags[0])
	}
	c.cfg.Personality = &configs.Personality{Persona: persona}
	return nil
}

// mpolModes maps linux.memoryPolicy.mode to MPOL_*.
var mpolModes = map[specs.MemoryPolicyModeType]int{
	specs.MpolDefault:            unix.MPOL_DEFAULT,
	specs.MpolPreferred:          unix.MPOL_PREFERRED,
	specs.MpolBind:               unix.MPOL_BIND,
	specs.MpolInterleave:         unix.MPOL_INTERLEAVE,
	specs.MpolLocal:              unix.MPOL_LOCAL,
	specs.MpolPreferredMany:      unix.MPOL_PREFERRED_MANY,
	specs.MpolWeightedInterleave: unix.MPOL_WEIGHTED_INTERLEAVE,
}

// mpolFlags maps linux.memoryPolicy.flags to MPOL_F_*.
var mpolFlags = map[specs.MemoryPolicyFlagType]int{
	specs.MpolFNumaBalancing: unix.MPOL_F_NUMA_BALANCING,
	specs.MpolFRelativeNodes: unix.MPOL_F_RELATIVE_NODES,
	specs.MpolFStaticNodes:   unix.MPOL_F_STATIC_NODES,
}

// memoryPolicy sets linux.memoryPolicy, checked as set_mempolicy(2) would.
func (c *converter) memoryPolicy() error {
	m := c.linux().MemoryPolicy
	if m == nil {
		return nil
	}
	const f = "linux.memoryPolicy"
	mode, ok := mpolModes[m.Mode]
	if !ok {
		return mpolErrorf(f+".mode", "mode", "unknown %q", m.Mode)
	}
	nodes, err := parseIDList(m.Nodes)
	if err != nil {
		return mpolErrorf(f+".nodes", "nodes", "%v", err)
	}
	// runc's words after husk's: "memory policy mode requires 0 nodes
	// but got 8", the count of nodes listed.
	switch m.Mode {
	case specs.MpolDefault, specs.MpolLocal:
		if len(nodes) > 0 {
			return mpolErrorf(f+".nodes", "nodes", "must be empty for %s, got %q: memory policy mode requires 0 nodes but got %d",
				m.Mode, m.Nodes, len(nodes))
		}
	case specs.MpolBind, specs.MpolInterleave, specs.MpolPreferredMany, specs.MpolWeightedInterleave:
		if len(nodes) == 0 {
			return mpolErrorf(f+".nodes", "nodes", "must not be empty for %s: memory policy mode requires at least one node but got 0",
				m.Mode)
		}
	}
	out := &configs.MemoryPolicy{Mode: mode, Nodes: nodes}
	for i, name := range m.Flags {
		flag, ok := mpolFlags[name]
		if !ok {
			return mpolErrorf(index(f+".flags", i), "flag", "unknown %q", name)
		}
		out.Flags |= flag
	}
	if out.Flags&unix.MPOL_F_STATIC_NODES != 0 && out.Flags&unix.MPOL_F_RELATIVE_NODES != 0 {
		return mpolErrorf(f+".flags", "flag", "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other")
	}
	if out.Flags != 0 && (m.Mode == specs.MpolDefault || m.Mode == specs.MpolLocal) {
		return mpolErrorf(f+".flags", "flag", "%s takes no flags", m.Mode)
	}
	c.cfg.MemoryPolicy = out
	return nil
}

// mpolErrorf is a linux.memoryPolicy error with runc's phrase ("invalid
// memory policy mode", "... flag", "... nodes") after the field.
func mpolErrorf(field, part, format string, args ...any) error {
	return fieldErrorf(field, "invalid memory policy "+part+": "+format, args...)
}
