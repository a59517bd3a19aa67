package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// The v2 code path over a fake cgroupfs: a temp dir holding the files a
// cgroup2 directory would (the library's TestMode lets it write plain
// files).

func fakeCgroup(t *testing.T, files map[string]string) string {
	t.Helper()
	cgroups.TestMode = true
	t.Cleanup(func() { cgroups.TestMode = false })
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeV2 is a V2 manager of dir offering controllers.
func fakeV2(t *testing.T, dir string, controllers ...string) *Manager {
	t.Helper()
	m, err := open(V2, &cgroups.Cgroup{Resources: &cgroups.Resources{}}, map[string]string{"": dir})
	if err != nil {
		t.Fatal(err)
	}
	m.unified = map[string]bool{}
	for _, c := range controllers {
		m.unified[c] = true
	}
	return m
}

func u32(v uint32) *uint32 { return &v }

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return strings.TrimSpace(string(data))
}

func TestV2FakeSet(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{
		"cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma",
		"memory.swap.max":    "max",
	})
	m := fakeV2(t, dir, "cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma")
	pids, idle, swappy := int64(20), int64(0), uint64(0)
	_ = swappy
	r := &configs.Resources{
		Memory:                     32 << 20,
		MemorySwap:                 64 << 20,
		MemoryReservation:          16 << 20,
		CpuShares:                  2048,
		CpuQuota:                   50000,
		CpuPeriod:                  100000,
		CPUIdle:                    &idle,
		CpusetCpus:                 "0",
		CpusetMems:                 "0",
		PidsLimit:                  &pids,
		BlkioWeight:                500,
		BlkioThrottleReadBpsDevice: []*cgroups.ThrottleDevice{cgroups.NewThrottleDevice(8, 0, 1<<20)},
		HugetlbLimit:               []*cgroups.HugepageLimit{{Pagesize: "2MB", Limit: 4 << 20}},
		Rdma:                       map[string]cgroups.LinuxRdma{"mlx5_0": {HcaHandles: u32(3), HcaObjects: u32(7)}},
		Unified:                    map[string]string{"memory.high": "30000000", "misc.max": "sev 2"},
	}
	if err := m.SetLimits(r); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"memory.max":      "33554432",
		"memory.swap.max": "33554432", // v2 counts swap alone: 64M-32M
		"memory.low":      "16777216",
		"memory.high":     "30000000",
		"cpu.weight":      "174", // shares 2048 on v2's scale
		"cpu.max":         "50000 100000",
		"cpu.idle":        "0",
		"cpuset.cpus":     "0",
		"cpuset.mems":     "0",
		"pids.max":        "20",
		"io.weight":       "4950", // blkio 500 on v2's scale
		"io.max":          "8:0 rbps=1048576",
		"hugetlb.2MB.max": "4194304",
		"rdma.max":        "mlx5_0 hca_handle=3 hca_object=7",
		"misc.max":        "sev 2",
	} {
		if got := readFile(t, dir, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
}

// An idle group's weight is the kernel's: cpu.weight is left alone while
// cpu.idle is 1 (the kernel refuses it), and written when it goes to 0.
// An update writes only what changes: idle again on an idle group, or a
// new weight while idle, writes nothing.
func TestV2FakeIdleWeight(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{"cgroup.controllers": "cpu"})
	m := fakeV2(t, dir, "cpu")
	one, zero := int64(1), int64(0)
	idle := &configs.Resources{CpuShares: 512, CPUIdle: &one}
	if err := m.Set(idle); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cpu.weight")); !os.IsNotExist(err) {
		t.Errorf("cpu.weight written while idle: %v", err)
	}
	if got := readFile(t, dir, "cpu.idle"); got != "1" {
		t.Errorf("cpu.idle = %q, want 1", got)
	}
	// The kernel would refuse these writes: make them fail.
	for _, f := range []string{"cpu.idle", "cpu.weight"} {
		os.Remove(filepath.Join(dir, f))
		if err := os.Mkdir(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	quota := &configs.Resources{CpuShares: 512, CPUIdle: &one, CpuQuota: 1000}
	if err := m.Update(idle, quota); err != nil {
		t.Errorf("update of the quota alone: %v", err)
	}
	if err := m.Update(idle, &configs.Resources{CpuShares: 512, CPUIdle: &one}); err != nil {
		t.Errorf("cpu.idle 1 again: %v", err)
	}
	if err := m.Update(idle, &configs.Resources{CpuShares: 256, CPUIdle: &one}); err == nil || !strings.Contains(err.Error(), "cpu.idle") {
		t.Errorf("a new weight while idle: %v, want a failure writing cpu.idle alone", err)
	}
	for _, f := range []string{"cpu.idle", "cpu.weight"} {
		os.Remove(filepath.Join(dir, f))
	}
	if err := m.Update(idle, &configs.Resources{CpuShares: 512, CPUIdle: &zero}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir, "cpu.weight"); got != "59" {
		t.Errorf("cpu.weight = %q, want 59", got)
	}
}

// Update leaves a group alone when its settings are prev's, and writes a
// group whole when one of them changes (cpu.max: quota and period).
func TestV2FakeUpdateWritesWhatChanges(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{"cgroup.controllers": "cpu memory pids", "memory.swap.max": "max"})
	m := fakeV2(t, dir, "cpu", "memory", "pids")
	pids := int64(20)
	prev := &configs.Resources{Memory: 32 << 20, CpuQuota: 50000, CpuPeriod: 100000, PidsLimit: &pids,
		Unified: map[string]string{"memory.high": "30000000"}}
	next := *prev
	next.CpuPeriod = 200000
	next.Unified = map[string]string{"memory.high": "30000000", "pids.max": "30"}
	if err := m.Update(prev, &next); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"memory.max", "memory.high"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s written, its value did not change: %v", f, err)
		}
	}
	if got := readFile(t, dir, "cpu.max"); got != "50000 200000" {
		t.Errorf("cpu.max = %q, want the quota with the new period", got)
	}
	if got := readFile(t, dir, "pids.max"); got != "30" {
		t.Errorf("pids.max = %q, want the changed unified key", got)
	}
}

// On v2 the device rules go to the eBPF hook, in order, deny-all first.
func TestV2FakeDevicesHook(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{"cgroup.controllers": "memory pids"})
	m := fakeV2(t, dir, "memory", "pids")
	var got *cgroups.Resources
	saved := cgroups.DevicesSetV2
	cgroups.DevicesSetV2 = func(path string, r *cgroups.Resources) error {
		if path != dir {
			t.Errorf("devices set on %s, want %s", path, dir)
		}
		got = r
		return nil
	}
	t.Cleanup(func() { cgroups.DevicesSetV2 = saved })
	if err := m.Set(&configs.Resources{Devices: configs.DefaultDeviceRules()}); err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got.Devices) != len(configs.DefaultDeviceRules()) || got.SkipDevices {
		t.Fatalf("hook got %+v", got)
	}
	got = nil
	if err := m.Update(&configs.Resources{}, &configs.Resources{Devices: configs.DefaultDeviceRules()}); err != nil {
		t.Fatal(err)
	}
	if got != nil && !got.SkipDevices {
		t.Error("Update rewrote the device rules")
	}
}

func TestV2FakeRefusals(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{"cgroup.controllers": "memory pids"})
	m := fakeV2(t, dir, "memory", "pids")
	rt, swappiness := int64(950000), uint64(10)
	for _, tc := range []struct {
		r    configs.Resources
		want []string
	}{
		{configs.Resources{CpuRtRuntime: rt}, []string{"linux.resources.cpu.realtimeRuntime", "950000", "cgroup v2"}},
		{configs.Resources{OomKillDisable: true}, []string{"linux.resources.memory.disableOOMKiller", "cgroup v2"}},
		{configs.Resources{MemorySwappiness: &swappiness}, []string{"linux.resources.memory.swappiness", "10"}},
		{configs.Resources{NetClsClassid: 7}, []string{"linux.resources.network.classID", "7"}},
		{configs.Resources{CpuQuota: 1000}, []string{"linux.resources.cpu.quota", "1000", "cpu controller is not available"}},
		{configs.Resources{BlkioWeight: 100}, []string{"linux.resources.blockIO.weight", "100", "io controller"}},
		{configs.Resources{Unified: map[string]string{"a/b": "1"}}, []string{`linux.resources.unified["a/b"]`}},
	} {
		err := m.SetLimits(&tc.r)
		if err == nil {
			t.Errorf("%+v accepted", tc.r)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %q", err, w)
			}
		}
	}
}

// A write the kernel refuses names the field behind the file.
func TestExplainNamesTheField(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{"cgroup.controllers": "memory pids"})
	m := fakeV2(t, dir, "memory", "pids")
	// A directory where a file should be makes the write fail.
	if err := os.Mkdir(filepath.Join(dir, "pids.max"), 0o755); err != nil {
		t.Fatal(err)
	}
	limit := int64(20)
	err := m.SetLimits(&configs.Resources{PidsLimit: &limit})
	if err == nil || !strings.Contains(err.Error(), "linux.resources.pids.limit") || !strings.Contains(err.Error(), "20") {
		t.Errorf("error %v: want the field and the value", err)
	}
}

func TestV2FakeFreezeAndOOM(t *testing.T) {
	dir := fakeCgroup(t, map[string]string{
		"cgroup.controllers": "memory",
		"cgroup.freeze":      "0\n",
		"memory.events":      "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
		"cgroup.procs":       "",
	})
	m := fakeV2(t, dir, "memory")
	if frozen, err := m.Frozen(); frozen || err != nil {
		t.Fatalf("Frozen() = %v, %v", frozen, err)
	}
	stop := make(chan struct{})
	defer close(stop)
	ch, err := m.NotifyOOM(stop)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.events"), []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no OOM event after oom_kill rose")
	}
	if n, err := m.OOMKillCount(); n != 1 || err != nil {
		t.Errorf("OOMKillCount() = %d, %v", n, err)
	}
	if pids, err := m.Pids(); len(pids) != 0 || err != nil {
		t.Errorf("Pids() = %v, %v", pids, err)
	}
}

// The path is checked once, by specconv; here only the default is made.
func TestCgroupPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "c1"},
		{"/a/b", "/a/b"},
		{"rel/c1", "rel/c1"},
	} {
		if got := cgroupPath(tc.in, "c1"); got != tc.want {
			t.Errorf("cgroupPath(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// A cgroup removed under a reader (ENODEV from its open directory, as
// when systemd drops an emptied scope) counts as gone, like ENOENT.
func TestGoneCgroup(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf("read cgroup.procs: %w", unix.ENODEV): true,
		fmt.Errorf("open: %w", os.ErrNotExist):           true,
		fmt.Errorf("read: %w", unix.EACCES):              false,
	} {
		if gone(err) != want {
			t.Errorf("gone(%v) = %v, want %v", err, !want, want)
		}
	}
}
