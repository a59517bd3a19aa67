package initproc

import (
	"errors"
	"fmt"
	"os"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// The process attributes of config.json that init (and, later, exec) sets
// on itself before it execs the process. Each is per thread in the kernel
// and survives execve, so they must be set by the thread that execs: init
// runs locked to one OS thread (runtime.LockOSThread).
//
// execCPUAffinity: the runtime-spec meant it for exec'd processes; husk
// also applies it to the container's init process. "initial" is set by
// applyInitialCPUAffinity, the first thing init does once it has its
// config (the parent has already put it into the container's cgroups by
// then); "final" is set by applyProcessAttrs, after the rootfs is built
// and before capabilities are dropped and seccomp is loaded (a filter may
// forbid sched_setaffinity).

// applyInitialCPUAffinity first forgets the affinity init inherited from
// husk's caller (`taskset -c 0 husk run`): every CPU, which the kernel
// narrows to the container cgroup's cpuset. Then it sets
// process.execCPUAffinity.initial, if any.
func applyInitialCPUAffinity(p *configs.Process) error {
	if err := resetCPUAffinity(); err != nil {
		return err
	}
	if p.CPUAffinity == nil || len(p.CPUAffinity.Initial) == 0 {
		return nil
	}
	return setAffinity("process.execCPUAffinity.initial", p.CPUAffinity.Initial)
}

// resetCPUAffinity allows the calling thread every CPU its cgroup allows.
func resetCPUAffinity() error {
	var all unix.CPUSet
	for i := range all {
		all[i] = ^all[i]
	}
	if err := unix.SchedSetaffinity(0, &all); err != nil {
		return fmt.Errorf("reset the CPU affinity inherited from husk's caller: sched_setaffinity: %w", err)
	}
	if logrus.IsLevelEnabled(logrus.DebugLevel) {
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(0, &got); err == nil {
			logrus.Debugf("CPU affinity set to the cgroup's CPUs: %d CPUs", got.Count())
		}
	}
	return nil
}

// applyProcessAttrs sets, on the calling thread, cfg's memory policy and
// personality and p's I/O priority, scheduler, final CPU affinity and LSM
// exec labels. Call it while init still has its capabilities.
func applyProcessAttrs(cfg *configs.Config, p *configs.Process) error {
	if m := cfg.MemoryPolicy; m != nil {
		if err := setMempolicy(m); err != nil {
			return fmt.Errorf("linux.memoryPolicy: set_mempolicy(mode %d, flags %#x, nodes %v): %w", m.Mode, m.Flags, m.Nodes, err)
		}
	}
	if pers := cfg.Personality; pers != nil {
		if err := personality(pers.Persona); err != nil {
			return fmt.Errorf("linux.personality: personality(%#x): %w", pers.Persona, err)
		}
	}
	if io := p.IOPriority; io != nil {
		if err := ioprioSet(io.Class, io.Priority); err != nil {
			return fmt.Errorf("process.ioPriority: ioprio_set(class %d, priority %d): %w", io.Class, io.Priority, err)
		}
	}
	// Before the scheduler: a SCHED_DEADLINE thread may not change its
	// affinity.
	if a := p.CPUAffinity; a != nil && len(a.Final) > 0 {
		if err := setAffinity("process.execCPUAffinity.final", a.Final); err != nil {
			return err
		}
	}
	if s := p.Scheduler; s != nil {
		attr := &unix.SchedAttr{
			Policy: s.Policy, Flags: s.Flags, Nice: s.Nice, Priority: s.Priority,
			Runtime: s.Runtime, Deadline: s.Deadline, Period: s.Period,
		}
		if err := unix.SchedSetAttr(0, attr, 0); err != nil {
			return fmt.Errorf("process.scheduler: sched_setattr(policy %d, priority %d, nice %d): %w", s.Policy, s.Priority, s.Nice, err)
		}
	}
	return setExecLabels(p)
}

// setAffinity pins the calling thread to cpus; field names the setting.
func setAffinity(field string, cpus []int) error {
	var set unix.CPUSet
	for _, cpu := range cpus {
		set.Set(cpu)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("%s: sched_setaffinity(%v): %w", field, cpus, err)
	}
	logrus.Debugf("%s: CPU affinity set to %v", field, cpus)
	return nil
}

func setMempolicy(m *configs.MemoryPolicy) error {
	var nodes unix.CPUSet // a 1024-bit mask, used here for NUMA nodes
	for _, n := range m.Nodes {
		nodes.Set(n)
	}
	if len(m.Nodes) == 0 {
		// An empty node mask: a NULL pointer and no bits.
		_, _, errno := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(m.Mode|m.Flags), 0, 0)
		if errno != 0 {
			return os.NewSyscallError("set_mempolicy", errno)
		}
		return nil
	}
	return os.NewSyscallError("set_mempolicy", unix.SetMemPolicy(m.Mode|m.Flags, &nodes))
}

func personality(persona uint32) error {
	_, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, uintptr(persona), 0, 0)
	if errno != 0 {
		return os.NewSyscallError("personality", errno)
	}
	return nil
}

const (
	ioprioWhoProcess = 1  // IOPRIO_WHO_PROCESS
	ioprioClassShift = 13 // IOPRIO_CLASS_SHIFT
)

// ioprioSet sets the calling thread's I/O class and priority.
func ioprioSet(class, prio int) error {
	value := class<<ioprioClassShift | prio
	_, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, uintptr(value))
	if errno != 0 {
		return os.NewSyscallError("ioprio_set", errno)
	}
	return nil
}

// setExecLabels asks the LSMs to switch the process to its AppArmor
// profile or SELinux label at execve. configs.Validate has refused them
// already on a host without that LSM. Untested here: the machine husk is
// developed on has neither.
func setExecLabels(p *configs.Process) error {
	if p.AppArmorProfile != "" {
		err := rootfs.WriteThreadAttr("apparmor/exec", "exec "+p.AppArmorProfile)
		if errors.Is(err, os.ErrNotExist) { // kernels before 5.1 have only the shared file
			err = rootfs.WriteThreadAttr("exec", "exec "+p.AppArmorProfile)
		}
		if err != nil {
			return fmt.Errorf("process.apparmorProfile %q: %w", p.AppArmorProfile, err)
		}
	}
	if p.SelinuxLabel != "" {
		if err := rootfs.WriteThreadAttr("exec", p.SelinuxLabel); err != nil {
			return fmt.Errorf("process.selinuxLabel %q: %w", p.SelinuxLabel, err)
		}
	}
	return nil
}
