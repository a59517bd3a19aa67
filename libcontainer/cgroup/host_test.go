package cgroup

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	devcfg "github.com/opencontainers/cgroups/devices/config"
)

// Tests on this host's real cgroups. They need root and skip otherwise.

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// unifiedMount is where the host's cgroup2 hierarchy is, if it has one.
func unifiedMount(t *testing.T) string {
	t.Helper()
	switch HostLayout() {
	case V2:
		return "/sys/fs/cgroup"
	case Hybrid:
		return hybridMount
	}
	t.Skip("no cgroup2 hierarchy on this host")
	return ""
}

// testDir makes a fresh cgroup directory under root, removed at the end.
func testDir(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("husk-unit-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	return dir
}

// inCgroup runs script with sh once the shell has been moved into dir,
// and returns its output.
func inCgroup(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "read _; "+script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	werr := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(cmd.Process.Pid)), 0)
	in.Write([]byte("\n"))
	in.Close()
	cmd.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	return out.String()
}

const probeDevices = `(exec 3</dev/null) 2>/dev/null && echo null; (exec 3</dev/zero) 2>/dev/null && echo zero; true`

// A whole container life on this host's cgroups, through the adapter:
// create, join, limit, freeze, measure, kill, remove.
func TestManagerOnHost(t *testing.T) {
	needRoot(t)
	id := fmt.Sprintf("husk-unit-%d", os.Getpid())
	m, err := New(&configs.Cgroup{Path: "/husk-unit/" + id}, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.KillAll(5 * time.Second)
		m.Destroy()
		os.Remove(filepath.Dir(m.Paths()["devices"]))
		for _, p := range m.Paths() {
			os.Remove(filepath.Dir(p))
		}
	})
	cmd := exec.Command("/bin/sh", "-c", "read _; while :; do sleep 0.05; done")
	in, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	if err := m.Apply(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	limit := int64(20)
	r := &configs.Resources{
		Memory:    64 << 20,
		PidsLimit: &limit,
		CpuQuota:  50000,
		CpuPeriod: 100000,
		Devices:   configs.DefaultDeviceRules(),
	}
	if m.unified["hugetlb"] || m.hasV1("hugetlb") {
		r.HugetlbLimit = []*cgroups.HugepageLimit{{Pagesize: "2MB", Limit: 4 << 20}}
	}
	if err := m.Set(r); err != nil {
		t.Fatal(err)
	}
	in.Write([]byte("\n"))
	paths := m.Paths()
	wantFiles := map[string]string{}
	switch m.Layout() {
	case V2:
		wantFiles[filepath.Join(paths[""], "memory.max")] = "67108864"
		wantFiles[filepath.Join(paths[""], "pids.max")] = "20"
		wantFiles[filepath.Join(paths[""], "cpu.max")] = "50000 100000"
	default:
		wantFiles[filepath.Join(paths["memory"], "memory.limit_in_bytes")] = "67108864"
		wantFiles[filepath.Join(paths["pids"], "pids.max")] = "20"
		wantFiles[filepath.Join(paths["cpu"], "cpu.cfs_quota_us")] = "50000"
		wantFiles[filepath.Join(paths["devices"], "devices.list")] = "c 1:3 rwm"
	}
	if r.HugetlbLimit != nil && m.Layout() == Hybrid && m.unified["hugetlb"] {
		wantFiles[filepath.Join(paths[""], "hugetlb.2MB.max")] = "4194304"
	}
	for f, want := range wantFiles {
		data, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s = %q, %v; want %q in it", f, data, err, want)
		}
	}
	pids, err := m.Pids()
	if err != nil || !slices.Contains(pids, cmd.Process.Pid) {
		t.Errorf("Pids() = %v, %v; want %d in it", pids, err, cmd.Process.Pid)
	}

	// Memory charged before the move stays behind on v1: wait for the
	// shell's next fork.
	var st *Stats
	for i := 0; i < 100; i++ {
		if st, err = m.Stats(); err != nil {
			t.Fatal(err)
		}
		if st.Memory.Usage.Usage > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st.Memory.Usage.Limit != 64<<20 || st.Memory.Usage.Usage == 0 || st.Pids.Limit != 20 || st.Pids.Current == 0 {
		t.Errorf("stats: memory %+v, pids %+v", st.Memory.Usage, st.Pids)
	}
	if r.HugetlbLimit != nil {
		if _, ok := st.Hugetlb["2MB"]; !ok {
			t.Errorf("stats: no 2MB hugetlb entry in %v", st.Hugetlb)
		}
	}

	if err := m.Freeze(); err != nil {
		t.Fatal(err)
	}
	if frozen, err := m.Frozen(); !frozen || err != nil {
		t.Errorf("Frozen() = %v, %v after Freeze", frozen, err)
	}
	if st, _, _ := procState(cmd.Process.Pid); st != 'D' && st != 'S' && st != 'T' {
		t.Logf("frozen shell in state %c", st)
	}
	if err := m.Thaw(); err != nil {
		t.Fatal(err)
	}
	if frozen, _ := m.Frozen(); frozen {
		t.Error("still frozen after Thaw")
	}

	up := &configs.Resources{Memory: 128 << 20, PidsLimit: &limit}
	if err := m.Update(r, up); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Stats(); st.Memory.Usage.Limit != 128<<20 {
		t.Errorf("limit after Update: %d", st.Memory.Usage.Limit)
	}

	if err := m.KillAll(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := m.Destroy(); err != nil {
		t.Fatal(err)
	}
	if m.Exists() {
		t.Errorf("cgroups left after Destroy: %v", paths)
	}
}

func procState(pid int) (byte, string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", err
	}
	i := bytes.LastIndexByte(data, ')')
	return data[i+2], string(data), nil
}

// Limits the host cannot honour are refused naming the field and value.
func TestUnavailableControllers(t *testing.T) {
	needRoot(t)
	id := fmt.Sprintf("husk-unit-na-%d", os.Getpid())
	m, err := New(&configs.Cgroup{}, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    configs.Resources
		need string
		want []string
	}{
		{configs.Resources{NetClsClassid: 0x100001}, "net_cls", []string{"linux.resources.network.classID", "1048577", "net_cls"}},
		{configs.Resources{Rdma: map[string]cgroups.LinuxRdma{"mlx5_0": {}}}, "rdma", []string{"linux.resources.rdma", "rdma"}},
		{configs.Resources{HugetlbLimit: []*cgroups.HugepageLimit{{Pagesize: "3MB", Limit: 1}}}, "", []string{"linux.resources.hugepageLimits[0].pageSize", "3MB"}},
	} {
		if tc.need != "" && (m.hasV1(tc.need) || m.unified[tc.need]) {
			continue // the host has it
		}
		_, _, _, err := m.route(&tc.r, nil)
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

// The v2 manager for real on the host's unified hierarchy (on a hybrid
// host with only the controllers it has there): join, device rules as an
// eBPF program through the library's fs2.Set, hugetlb limits, the v2
// freezer (cgroup.freeze), listing, killing and removal.
func TestV2ManagerOnUnified(t *testing.T) {
	needRoot(t)
	root := unifiedMount(t)
	dir := testDir(t, root)
	m, err := open(V2, &cgroups.Cgroup{Resources: &cgroups.Resources{}}, map[string]string{"": dir})
	if err != nil {
		t.Fatal(err)
	}
	m.unified = readControllers(root)

	cmd := exec.Command("/bin/sh", "-c", "read _; "+probeDevices+"; read _")
	var out bytes.Buffer
	cmd.Stdout = &out
	in, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	if err := m.AddPid(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	r := &configs.Resources{Devices: []*configs.DeviceRule{{Type: 'c', Major: 1, Minor: 3, Permissions: "rwm", Allow: true}}}
	if m.unified["hugetlb"] {
		// The parent must hand the controller down.
		os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("+hugetlb"), 0)
		r.HugetlbLimit = []*cgroups.HugepageLimit{{Pagesize: "2MB", Limit: 4 << 20}}
	}
	if err := m.Set(r); err != nil {
		t.Fatal(err)
	}
	if r.HugetlbLimit != nil {
		if got := readFile(t, dir, "hugetlb.2MB.max"); got != "4194304" {
			t.Errorf("hugetlb.2MB.max = %q", got)
		}
	}
	in.Write([]byte("\n"))
	time.Sleep(100 * time.Millisecond)

	if err := m.Freeze(); err != nil {
		t.Fatal(err)
	}
	if frozen, err := m.Frozen(); !frozen || err != nil {
		t.Errorf("Frozen() = %v, %v", frozen, err)
	}
	if pids, err := m.Pids(); err != nil || !slices.Contains(pids, cmd.Process.Pid) {
		t.Errorf("Pids() = %v, %v", pids, err)
	}
	if err := m.Thaw(); err != nil {
		t.Fatal(err)
	}
	if err := m.KillAll(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	<-done
	if got := out.String(); got != "null\n" {
		t.Errorf("device probe printed %q, want only null", got)
	}
	if err := m.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", dir, err)
	}
}

// On cgroup v1 the device rules land in the listed order: devices.list
// starts with the config's first rule, husk's defaults follow (runc's
// place for them), and a later rule changes an earlier one in place.
func TestDeviceRulesInOrderV1(t *testing.T) {
	needRoot(t)
	if HostLayout() == V2 {
		t.Skip("no v1 devices controller on this host (cgroup v2)")
	}
	id := fmt.Sprintf("husk-unit-dev-%d", os.Getpid())
	m, err := New(&configs.Cgroup{Path: "/husk-unit/" + id}, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Destroy()
		for _, p := range m.Paths() {
			os.Remove(filepath.Dir(p))
		}
	})
	rule := func(typ rune, major, minor int64, access string, allow bool) *configs.DeviceRule {
		return &configs.DeviceRule{Type: devcfg.Type(typ), Major: major, Minor: minor, Permissions: devcfg.Permissions(access), Allow: allow}
	}
	rules := append([]*configs.DeviceRule{rule('c', 10, 229, "rwm", true), rule('c', 10, 229, "w", false)},
		configs.DefaultDeviceRules()...)
	if err := m.Set(&configs.Resources{Devices: rules}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(m.Paths()["devices"], "devices.list"))
	if err != nil {
		t.Fatal(err)
	}
	want := "c 10:229 rm\n"
	for _, r := range configs.DefaultDeviceRules() {
		want += r.CgroupString() + "\n"
	}
	if string(data) != want {
		t.Errorf("devices.list:\n%s\nwant:\n%s", data, want)
	}
}
