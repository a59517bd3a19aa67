package specconv

import (
	"reflect"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runtime-spec/specs-go"
)

func i64(v int64) *int64   { return &v }
func u64(v uint64) *uint64 { return &v }
func u16(v uint16) *uint16 { return &v }
func u32(v uint32) *uint32 { return &v }
func boolp(v bool) *bool   { return &v }
func withDefaults(r configs.Resources) configs.Resources {
	r.Devices = append(r.Devices, configs.DefaultDeviceRules()...)
	return r
}

func TestCgroupsNoneGiven(t *testing.T) {
	if c := convert(t, withSpec(func(s *specs.Spec) { s.Linux.Resources = nil })); c.Cgroup != nil {
		t.Errorf("cgroup %+v without cgroupsPath or resources", c.Cgroup)
	}
	def := (&configs.Config{}).CgroupConfig()
	if def.Path != "" || !reflect.DeepEqual(def.Resources.Devices, configs.DefaultDeviceRules()) {
		t.Errorf("defaults: %+v", def)
	}
}

func TestCgroupsConvert(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		r    *specs.LinuxResources
		want configs.Cgroup
	}{
		{"absolute path", "/husk/c1/", nil, configs.Cgroup{Path: "/husk/c1", Resources: withDefaults(configs.Resources{})}},
		{"relative path", "pods/c1", nil, configs.Cgroup{Path: "pods/c1", Resources: withDefaults(configs.Resources{})}},
		{"runc's deny-all rule comes first", "", &specs.LinuxResources{
			Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
		}, configs.Cgroup{Resources: withDefaults(configs.Resources{
			Devices: []*configs.DeviceRule{{Type: 'a', Major: -1, Minor: -1, Permissions: "rwm"}},
		})}},
		{"a listed block device", "", &specs.LinuxResources{
			Devices: []specs.LinuxDeviceCgroup{{Allow: true, Type: "b", Major: i64(7), Minor: i64(0), Access: "rw"}},
		}, configs.Cgroup{Resources: withDefaults(configs.Resources{
			Devices: []*configs.DeviceRule{{Type: 'b', Major: 7, Minor: 0, Permissions: "rw", Allow: true}},
		})}},
		{"memory", "", &specs.LinuxResources{Memory: &specs.LinuxMemory{
			Limit: i64(32 << 20), Reservation: i64(16 << 20), Swap: i64(64 << 20),
			Swappiness: u64(10), DisableOOMKiller: boolp(true), CheckBeforeUpdate: boolp(true),
		}}, configs.Cgroup{Resources: withDefaults(configs.Resources{
			Memory: 32 << 20, MemoryReservation: 16 << 20, MemorySwap: 64 << 20, MemorySwappiness: u64(10),
			OomKillDisable: true, MemoryCheckBeforeUpdate: true,
		})}},
		{"unlimited memory", "", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(-1), Swap: i64(-1)}},
			configs.Cgroup{Resources: withDefaults(configs.Resources{Memory: -1, MemorySwap: -1})}},
		{"cpu", "", &specs.LinuxResources{CPU: &specs.LinuxCPU{
			Shares: u64(512), Quota: i64(50000), Period: u64(100000), Burst: u64(1000),
			RealtimeRuntime: i64(100), RealtimePeriod: u64(1000), Cpus: "0-1,3", Mems: "0", Idle: i64(1),
		}}, configs.Cgroup{Resources: withDefaults(configs.Resources{
			CpuShares: 512, CpuQuota: 50000, CpuPeriod: 100000, CpuBurst: u64(1000),
			CpuRtRuntime: 100, CpuRtPeriod: 1000, CpusetCpus: "0-1,3", CpusetMems: "0", CPUIdle: i64(1),
		})}},
		{"pids", "", &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(20)}},
			configs.Cgroup{Resources: withDefaults(configs.Resources{PidsLimit: i64(20)})}},
		{"blockIO", "", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{
			Weight: u16(500), LeafWeight: u16(300),
			WeightDevice:            []specs.LinuxWeightDevice{{LinuxBlockIODevice: specs.LinuxBlockIODevice{Major: 8, Minor: 0}, Weight: u16(100)}},
			ThrottleReadBpsDevice:   []specs.LinuxThrottleDevice{{LinuxBlockIODevice: specs.LinuxBlockIODevice{Major: 8, Minor: 0}, Rate: 1 << 20}},
			ThrottleWriteIOPSDevice: []specs.LinuxThrottleDevice{{LinuxBlockIODevice: specs.LinuxBlockIODevice{Major: 8, Minor: 16}, Rate: 100}},
		}}, configs.Cgroup{Resources: withDefaults(configs.Resources{
			BlkioWeight: 500, BlkioLeafWeight: 300,
			BlkioWeightDevice:            []*cgroups.WeightDevice{cgroups.NewWeightDevice(8, 0, 100, 0)},
			BlkioThrottleReadBpsDevice:   []*cgroups.ThrottleDevice{cgroups.NewThrottleDevice(8, 0, 1<<20)},
			BlkioThrottleWriteIOPSDevice: []*cgroups.ThrottleDevice{cgroups.NewThrottleDevice(8, 16, 100)},
		})}},
		{"hugepages", "", &specs.LinuxResources{HugepageLimits: []specs.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 1 << 22}}},
			configs.Cgroup{Resources: withDefaults(configs.Resources{HugetlbLimit: []*cgroups.HugepageLimit{{Pagesize: "2MB", Limit: 1 << 22}}})}},
		{"network", "", &specs.LinuxResources{Network: &specs.LinuxNetwork{
			ClassID: u32(0x100001), Priorities: []specs.LinuxInterfacePriority{{Name: "eth0", Priority: 5}},
		}}, configs.Cgroup{Resources: withDefaults(configs.Resources{
			NetClsClassid: 0x100001, NetPrioIfpriomap: []*cgroups.IfPrioMap{{Interface: "eth0", Priority: 5}},
		})}},
		{"rdma", "", &specs.LinuxResources{Rdma: map[string]specs.LinuxRdma{"mlx5_1": {HcaHandles: u32(3)}}},
			configs.Cgroup{Resources: withDefaults(configs.Resources{Rdma: map[string]cgroups.LinuxRdma{"mlx5_1": {HcaHandles: u32(3)}}})}},
		{"unified", "", &specs.LinuxResources{Unified: map[string]string{"memory.high": "1G", "cgroup.max.depth": "3"}},
			configs.Cgroup{Resources: withDefaults(configs.Resources{Unified: map[string]string{"memory.high": "1G", "cgroup.max.depth": "3"}})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := convert(t, withSpec(func(s *specs.Spec) {
				s.Linux.CgroupsPath = tc.path
				s.Linux.Resources = tc.r
			}))
			if c.Cgroup == nil || !reflect.DeepEqual(*c.Cgroup, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", dump(c.Cgroup), dump(tc.want))
			}
		})
	}
}

// TestCgroupsSliceFormWithoutSystemd: containerd writes "slice:prefix:name"
// whenever a pod's cgroup parent is a .slice, even with SystemdCgroup =
// false; runc's cgroupfs driver takes it as a relative path, and so does
// husk, warning about the mismatch. Only that form warns.
func TestCgroupsSliceFormWithoutSystemd(t *testing.T) {
	for _, tc := range []struct {
		path, want string
		warns      bool
	}{
		{"test.slice:cri-containerd:abc", "test.slice:cri-containerd:abc", true},
		{":husk:c1", ":husk:c1", true},
		// Still one directory under husk's own cgroup: no part is "..".
		{"..:x:y", "..:x:y", true},
		{"::", "::", true},
		{"a:b", "a:b", false},
		{"pods/a:b:c", "pods/a:b:c", false},
		{"/test.slice:cri-containerd:abc", "/test.slice:cri-containerd:abc", false},
	} {
		c, warnings, err := Convert(withSpec(func(s *specs.Spec) { s.Linux.CgroupsPath = tc.path }), Options{Bundle: bundle})
		if err != nil {
			t.Errorf("%q: %v", tc.path, err)
			continue
		}
		if c.Cgroup == nil || c.Cgroup.Path != tc.want || c.Cgroup.Systemd {
			t.Errorf("%q: cgroup %+v, want the cgroupfs path %q", tc.path, c.Cgroup, tc.want)
		}
		want := []string(nil)
		if tc.warns {
			want = []string{`linux.cgroupsPath: "` + tc.path + `" is the systemd slice:prefix:name form, but the cgroupfs driver is in use (no --systemd-cgroup): taken as a path relative to husk's own cgroup, as runc does`}
		}
		if !reflect.DeepEqual(warnings, want) {
			t.Errorf("%q: warnings %q, want %q", tc.path, warnings, want)
		}
	}
}

func TestCgroupsErrors(t *testing.T) {
	for _, tc := range []struct {
		want string
		path string
		r    *specs.LinuxResources
	}{
		{`linux.cgroupsPath: "/" is the root cgroup`, "/", nil},
		{`linux.cgroupsPath: "../x" leaves husk's own cgroup`, "../x", nil},
		{`linux.resources.devices[0].type: unknown "p"`, "", &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Type: "p"}}}},
		{`linux.resources.devices[1].access: "xyz": names no access`, "", &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{}, {Type: "c", Access: "xyz"}}}},
		{`linux.resources.devices[0].major: -5 is negative`, "", &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Type: "c", Major: i64(-5)}}}},
		{`linux.resources.memory.limit: -2`, "", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(-2)}}},
		{`linux.resources.memory.swap: 1048576 is below memory.limit 2097152`, "", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(2 << 20), Swap: i64(1 << 20)}}},
		{`linux.resources.memory.swap: 1048576 needs a memory.limit`, "", &specs.LinuxResources{Memory: &specs.LinuxMemory{Swap: i64(1 << 20)}}},
		{`linux.resources.memory.swappiness: 101`, "", &specs.LinuxResources{Memory: &specs.LinuxMemory{Swappiness: u64(101)}}},
		{`linux.resources.cpu.quota: 10: want at least 1000`, "", &specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: i64(10)}}},
		{`linux.resources.cpu.period: 5000000`, "", &specs.LinuxResources{CPU: &specs.LinuxCPU{Period: u64(5000000)}}},
		{`linux.resources.cpu.idle: 2`, "", &specs.LinuxResources{CPU: &specs.LinuxCPU{Idle: i64(2)}}},
		{`linux.resources.cpu.cpus: "0-x"`, "", &specs.LinuxResources{CPU: &specs.LinuxCPU{Cpus: "0-x"}}},
		{`linux.resources.cpu.mems: "a"`, "", &specs.LinuxResources{CPU: &specs.LinuxCPU{Mems: "a"}}},
		{`linux.resources.blockIO.weight: 5: want 10 to 1000`, "", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{Weight: u16(5)}}},
		{`linux.resources.blockIO.weightDevice[0].weight: 2000`, "", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{
			WeightDevice: []specs.LinuxWeightDevice{{Weight: u16(2000)}}}}},
		{`linux.resources.blockIO.throttleReadBpsDevice[0]: device -1:0`, "", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{
			ThrottleReadBpsDevice: []specs.LinuxThrottleDevice{{LinuxBlockIODevice: specs.LinuxBlockIODevice{Major: -1}}}}}},
		{`linux.resources.hugepageLimits[0].pageSize: "2M"`, "", &specs.LinuxResources{HugepageLimits: []specs.LinuxHugepageLimit{{Pagesize: "2M"}}}},
		{`linux.resources.network.priorities[0].name: must not be empty`, "", &specs.LinuxResources{Network: &specs.LinuxNetwork{
			Priorities: []specs.LinuxInterfacePriority{{Priority: 1}}}}},
		{`linux.resources.rdma: device name ""`, "", &specs.LinuxResources{Rdma: map[string]specs.LinuxRdma{"": {}}}},
		{`linux.resources.unified["memory"]: not a cgroup v2 file name`, "", &specs.LinuxResources{Unified: map[string]string{"memory": "1"}}},
		{`linux.resources.unified["../memory.max"]: not a cgroup v2 file name`, "", &specs.LinuxResources{Unified: map[string]string{"../memory.max": "1"}}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, _, err := Convert(withSpec(func(s *specs.Spec) {
				s.Linux.CgroupsPath = tc.path
				s.Linux.Resources = tc.r
			}), Options{Bundle: bundle})
			if !contains(err, tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestUpdateResources(t *testing.T) {
	cur := configs.Resources{
		Devices: configs.DefaultDeviceRules(), Memory: 32 << 20, PidsLimit: i64(10), CpusetCpus: "0",
		HugetlbLimit: []*cgroups.HugepageLimit{{Pagesize: "2MB", Limit: 1}},
	}
	got, warnings, err := UpdateResources(cur, &specs.LinuxResources{
		Devices:        []specs.LinuxDeviceCgroup{{Allow: true, Access: "rwm"}},
		Memory:         &specs.LinuxMemory{Limit: i64(64 << 20)},
		Pids:           &specs.LinuxPids{Limit: i64(20)},
		HugepageLimits: []specs.LinuxHugepageLimit{{Pagesize: "1GB", Limit: 2}},
	})
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	want := cur
	want.Memory, want.PidsLimit = 64<<20, i64(20)
	want.HugetlbLimit = []*cgroups.HugepageLimit{{Pagesize: "1GB", Limit: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", dump(got), dump(want))
	}
	if *cur.PidsLimit != 10 || cur.HugetlbLimit[0].Pagesize != "2MB" {
		t.Error("the current resources were changed")
	}
	cur.MemorySwap = 64 << 20
	_, _, err = UpdateResources(cur, &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(128 << 20)}})
	if !contains(err, "linux.resources.memory.swap: 67108864 is below memory.limit 134217728") {
		t.Errorf("memory above swap: %v", err)
	}
}

func TestCgroupsSystemd(t *testing.T) {
	conv := func(path string, ann map[string]string) (*configs.Config, error) {
		s := withSpec(func(s *specs.Spec) {
			s.Linux.CgroupsPath = path
			s.Annotations = ann
		})
		c, _, err := Convert(s, Options{Bundle: "/b", SystemdCgroup: true})
		return c, err
	}
	for _, tc := range []struct {
		path                 string
		parent, prefix, name string
	}{
		{"", "system.slice", "husk", ""},
		{"system.slice:docker:1234", "system.slice", "docker", "1234"},
		{"kubepods-besteffort-pod1.slice:cri-containerd:abc", "kubepods-besteffort-pod1.slice", "cri-containerd", "abc"},
		{":husk:c1", "system.slice", "husk", "c1"},
	} {
		c, err := conv(tc.path, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.path, err)
		}
		cg := c.Cgroup
		if !cg.Systemd || cg.Parent != tc.parent || cg.ScopePrefix != tc.prefix || cg.Name != tc.name || cg.Path != "" {
			t.Errorf("%q: %+v", tc.path, cg)
		}
	}
	for _, bad := range []string{"/husk/c1", "a:b", "a.slice:b:c:d", "notaslice:b:c"} {
		_, err := conv(bad, nil)
		if err == nil || !strings.Contains(err.Error(), "linux.cgroupsPath") || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	c, err := conv("", map[string]string{"org.systemd.property.TimeoutStopSec": "30", "org.systemd.property.CollectMode": "'inactive-or-failed'"})
	if err != nil {
		t.Fatal(err)
	}
	props, err := configs.SystemdProperties(c.Cgroup.SystemdProps)
	if err != nil || len(props) != 2 || props[0].Name != "CollectMode" || props[1].Name != "TimeoutStopUSec" || props[1].Value.Value() != uint64(30e6) {
		t.Errorf("properties %+v, %v", props, err)
	}
	if _, err := conv("", map[string]string{"org.systemd.property.MemoryMax": "lots of"}); err == nil ||
		!strings.Contains(err.Error(), `org.systemd.property.MemoryMax`) {
		t.Errorf("bad property value: %v", err)
	}
}
