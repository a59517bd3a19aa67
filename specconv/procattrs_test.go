package specconv

import (
	"errors"
	"reflect"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func TestProcAttrs(t *testing.T) {
	c := convert(t, withSpec(func(s *specs.Spec) {
		s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedFIFO, Priority: 10,
			Flags: []specs.LinuxSchedulerFlag{specs.SchedFlagResetOnFork}}
		s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_IDLE, Priority: 7}
		s.Process.ExecCPUAffinity = &specs.CPUAffinity{Initial: "3,0-1, 1", Final: "7"}
		s.Linux.Personality = &specs.LinuxPersonality{Domain: specs.PerLinux32}
		s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolInterleave, Nodes: "0-2",
			Flags: []specs.MemoryPolicyFlagType{specs.MpolFStaticNodes}}
		s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"veth1": {Name: "eth1"}, "br0": {}}
	}))
	p := c.Process
	for _, check := range []struct {
		name      string
		got, want any
	}{
		{"scheduler", p.Scheduler, &configs.Scheduler{Policy: unix.SCHED_FIFO, Priority: 10, Flags: unix.SCHED_FLAG_RESET_ON_FORK}},
		{"ioPriority", p.IOPriority, &configs.IOPriority{Class: 3, Priority: 7}},
		{"execCPUAffinity", p.CPUAffinity, &configs.CPUAffinity{Initial: []int{0, 1, 3}, Final: []int{7}}},
		{"personality", c.Personality, &configs.Personality{Persona: 8}},
		{"memoryPolicy", c.MemoryPolicy, &configs.MemoryPolicy{Mode: unix.MPOL_INTERLEAVE, Flags: unix.MPOL_F_STATIC_NODES, Nodes: []int{0, 1, 2}}},
		{"netDevices", c.NetDevices, map[string]configs.NetDevice{"veth1": {Name: "eth1"}, "br0": {}}},
	} {
		if !reflect.DeepEqual(check.got, check.want) {
			t.Errorf("%s = %s, want %s", check.name, dump(check.got), dump(check.want))
		}
	}
}

func TestProcAttrErrors(t *testing.T) {
	sched := func(s specs.Scheduler) func(*specs.Spec) {
		return func(sp *specs.Spec) { sp.Process.Scheduler = &s }
	}
	for _, tc := range []struct {
		want string
		edit func(s *specs.Spec)
	}{
		// process.scheduler
		{`process.scheduler.policy: unknown "SCHED_FAST"`, sched(specs.Scheduler{Policy: "SCHED_FAST"})},
		{`process.scheduler.policy: "SCHED_ISO" is not implemented by Linux`, sched(specs.Scheduler{Policy: specs.SchedISO})},
		{"process.scheduler.nice: must be between -20 and 19, got 20", sched(specs.Scheduler{Policy: specs.SchedOther, Nice: 20})},
		{"process.scheduler.nice: must be between -20 and 19, got -21", sched(specs.Scheduler{Policy: specs.SchedBatch, Nice: -21})},
		{"process.scheduler.priority: must be between 1 and 99 for SCHED_FIFO, got 0", sched(specs.Scheduler{Policy: specs.SchedFIFO})},
		{"process.scheduler.priority: must be between 1 and 99 for SCHED_RR, got 100", sched(specs.Scheduler{Policy: specs.SchedRR, Priority: 100})},
		{"process.scheduler.priority: must be 0 for SCHED_OTHER (only SCHED_FIFO and SCHED_RR have one), got 5", sched(specs.Scheduler{Policy: specs.SchedOther, Priority: 5})},
		{"process.scheduler: runtime, deadline and period are only for SCHED_DEADLINE, not SCHED_IDLE", sched(specs.Scheduler{Policy: specs.SchedIdle, Runtime: 1})},
		{"process.scheduler.runtime: must be set for SCHED_DEADLINE", sched(specs.Scheduler{Policy: specs.SchedDeadline})},
		{"process.scheduler.runtime: 20 is above the deadline 10", sched(specs.Scheduler{Policy: specs.SchedDeadline, Runtime: 20, Deadline: 10})},
		{"process.scheduler.deadline: 30 is above the period 20", sched(specs.Scheduler{Policy: specs.SchedDeadline, Runtime: 10, Deadline: 30, Period: 20})},
		{`process.scheduler.flags[1]: unknown "SCHED_FLAG_FAST"`, sched(specs.Scheduler{Policy: specs.SchedOther,
			Flags: []specs.LinuxSchedulerFlag{specs.SchedFlagResetOnFork, "SCHED_FLAG_FAST"}})},

		// process.ioPriority
		{`process.ioPriority.class: unknown "IOPRIO_CLASS_NONE"`, func(s *specs.Spec) {
			s.Process.IOPriority = &specs.LinuxIOPriority{Class: "IOPRIO_CLASS_NONE"}
		}},
		{"process.ioPriority.priority: must be between 0 and 7, got 8", func(s *specs.Spec) {
			s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_BE, Priority: 8}
		}},
		{"process.ioPriority.priority: must be between 0 and 7, got -1", func(s *specs.Spec) {
			s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_RT, Priority: -1}
		}},

		// process.execCPUAffinity
		{`process.execCPUAffinity.initial: bad list "0-x": "x" is not a number`, func(s *specs.Spec) {
			s.Process.ExecCPUAffinity = &specs.CPUAffinity{Initial: "0-x"}
		}},
		{`process.execCPUAffinity.final: bad list "3-1": range "3-1" ends before it starts`, func(s *specs.Spec) {
			s.Process.ExecCPUAffinity = &specs.CPUAffinity{Final: "3-1"}
		}},
		{`process.execCPUAffinity.final: bad list "1,,2": "" is not a number`, func(s *specs.Spec) {
			s.Process.ExecCPUAffinity = &specs.CPUAffinity{Final: "1,,2"}
		}},
		{`process.execCPUAffinity.final: bad list "-1": "" is not a number`, func(s *specs.Spec) {
			s.Process.ExecCPUAffinity = &specs.CPUAffinity{Final: "-1"}
		}},
		{`process.execCPUAffinity.initial: bad list "4096": 4096 is above 1023`, func(s *specs.Spec) {
			s.Process.ExecCPUAffinity = &specs.CPUAffinity{Initial: "4096"}
		}},

		// linux.personality
		{`linux.personality.domain: unknown "LINUX64" (LINUX or LINUX32)`, func(s *specs.Spec) {
			s.Linux.Personality = &specs.LinuxPersonality{Domain: "LINUX64"}
		}},
		{`linux.personality.flags[0]: unknown "ADDR_NO_RANDOMIZE": the runtime-spec defines no personality flags`, func(s *specs.Spec) {
			s.Linux.Personality = &specs.LinuxPersonality{Domain: specs.PerLinux, Flags: []specs.LinuxPersonalityFlag{"ADDR_NO_RANDOMIZE"}}
		}},

		// linux.memoryPolicy
		{`linux.memoryPolicy.mode: invalid memory policy mode: unknown "MPOL_FAST"`, func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: "MPOL_FAST"}
		}},
		{`linux.memoryPolicy.nodes: invalid memory policy nodes: bad list "0-x": "x" is not a number`, func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind, Nodes: "0-x"}
		}},
		{"linux.memoryPolicy.nodes: invalid memory policy nodes: must not be empty for MPOL_BIND: memory policy mode requires at least one node but got 0", func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind}
		}},
		{`linux.memoryPolicy.nodes: invalid memory policy nodes: must be empty for MPOL_LOCAL, got "0": memory policy mode requires 0 nodes but got 1`, func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolLocal, Nodes: "0"}
		}},
		{`linux.memoryPolicy.flags[0]: invalid memory policy flag: unknown "MPOL_F_FAST"`, func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind, Nodes: "0", Flags: []specs.MemoryPolicyFlagType{"MPOL_F_FAST"}}
		}},
		{"linux.memoryPolicy.flags: invalid memory policy flag: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other", func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolBind, Nodes: "0",
				Flags: []specs.MemoryPolicyFlagType{specs.MpolFStaticNodes, specs.MpolFRelativeNodes}}
		}},
		{"linux.memoryPolicy.flags: invalid memory policy flag: MPOL_DEFAULT takes no flags", func(s *specs.Spec) {
			s.Linux.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: specs.MpolDefault, Flags: []specs.MemoryPolicyFlagType{specs.MpolFStaticNodes}}
		}},

		// linux.netDevices
		{`linux.netDevices: needs a "network" namespace in linux.namespaces: moving devices into the host's would be a no-op`, func(s *specs.Spec) {
			s.Linux.Namespaces[1].Type = specs.CgroupNamespace
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"veth1": {}}
		}},
		{`linux.netDevices["a/b"]: host device name: "a/b" contains '/', ':' or white space`, func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"a/b": {}}
		}},
		{`linux.netDevices["veth1"].name: "averyveryverylongname" is longer than 15 bytes`, func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"veth1": {Name: "averyveryverylongname"}}
		}},
		{`linux.netDevices["veth1"].name: ".." is not a valid name`, func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"veth1": {Name: ".."}}
		}},
		{`linux.netDevices["veth2"]: "eth0" is also the name of "veth1" in the container`, func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"veth1": {Name: "eth0"}, "veth2": {Name: "eth0"}}
		}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			c, _, err := Convert(withSpec(tc.edit), Options{Bundle: bundle})
			if err == nil {
				t.Fatalf("Convert = %s, want an error", dump(c))
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %v\nwant: %s", err, tc.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error %#v is not a FieldError", err)
			}
		})
	}
}
