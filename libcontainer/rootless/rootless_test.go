package rootless

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": "auto", "auto": "auto", "true": "true", "FALSE": "false", "1": "true", "0": "false"} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("maybe"); err == nil || !strings.Contains(err.Error(), `--rootless: unknown "maybe"`) {
		t.Errorf("ParseMode(maybe): %v", err)
	}
}

func TestModeCgroups(t *testing.T) {
	root, user, nsroot := Caller{}, Caller{EUID: 1000}, Caller{InUserNS: true}
	for _, c := range []struct {
		mode   Mode
		caller Caller
		want   bool
	}{
		{"auto", root, false}, {"auto", user, true}, {"auto", nsroot, true},
		{"true", root, true}, {"false", user, false},
	} {
		if got := c.mode.Cgroups(c.caller); got != c.want {
			t.Errorf("%s.Cgroups(%+v) = %v", c.mode, c.caller, got)
		}
	}
}

func TestDefaultStateRoot(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		caller Caller
		env    func(string) string
		want   string
	}{
		{Caller{}, env("XDG_RUNTIME_DIR", "/run/user/0"), "/run/husk"},
		{Caller{EUID: 1000}, env("XDG_RUNTIME_DIR", "/run/user/1000"), "/run/user/1000/husk"},
		{Caller{EUID: 1000}, env(), "/run/husk"},
		{Caller{InUserNS: true}, env("XDG_RUNTIME_DIR", "/run/user/1000", "USER", "alice"), "/run/user/1000/husk"},
		{Caller{InUserNS: true}, env("XDG_RUNTIME_DIR", "/run/user/0", "USER", "root"), "/run/husk"},
	} {
		if got := DefaultStateRoot(c.caller, c.env); got != c.want {
			t.Errorf("DefaultStateRoot(%+v) = %q, want %q", c.caller, got, c.want)
		}
	}
}

func TestIsInitialMap(t *testing.T) {
	if !isInitialMap("         0          0 4294967295\n") {
		t.Error("the host's map is not initial")
	}
	if isInitialMap("0 100000 65536\n") {
		t.Error("a container's map is initial")
	}
}

func TestParseSubIDs(t *testing.T) {
	text := "# comment\nalice:100000:65536\nbob:165536:65536\n1001:300000:10\nalice:500000:5\n"
	got, err := ParseSubIDs(strings.NewReader(text), "alice", 1001)
	if err != nil {
		t.Fatal(err)
	}
	want := []Range{{100000, 65536}, {300000, 10}, {500000, 5}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("range %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ParseSubIDs(strings.NewReader("alice:1\n"), "alice", 1); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad line: %v", err)
	}
}

func TestCheckMappings(t *testing.T) {
	src := IDSource{Own: 1000, File: "/etc/subuid", Ranges: []Range{{100000, 65536}}}
	m := func(c, h, s uint32) configs.IDMap { return configs.IDMap{ContainerID: c, HostID: h, Size: s} }
	for _, c := range []struct {
		maps   []configs.IDMap
		helper bool
		err    string
	}{
		{[]configs.IDMap{m(0, 1000, 1)}, false, ""},
		{[]configs.IDMap{m(0, 1000, 1), m(1, 100000, 65536)}, true, ""},
		{[]configs.IDMap{m(0, 100000, 65536)}, true, ""},
		{[]configs.IDMap{m(0, 1000, 2)}, false, "linux.uidMappings[0]: hostID 1000 size 2 is outside"},
		{[]configs.IDMap{m(0, 1000, 1), m(1, 100000, 65537)}, false, "linux.uidMappings[1]: hostID 100000 size 65537 is outside the ids this user may map (its own 1000, and subordinate ids 100000-165535 in /etc/subuid)"},
		{[]configs.IDMap{m(0, 99999, 10)}, false, "linux.uidMappings[0]: hostID 99999 size 10 is outside"},
		{[]configs.IDMap{m(0, 1000, 1), m(0, 100000, 10)}, false, "linux.uidMappings[1]: containerID 0 size 10 overlaps linux.uidMappings[0]"},
		{[]configs.IDMap{m(0, 100000, 10), m(5, 100005, 10)}, false, "overlaps linux.uidMappings[0]"},
		{nil, false, "linux.uidMappings: a rootless container needs a mapping"},
	} {
		helper, err := CheckMappings("linux.uidMappings", c.maps, src)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.maps, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want %q", c.maps, err, c.err)
		case c.err == "" && helper != c.helper:
			t.Errorf("%v: helper %v, want %v", c.maps, helper, c.helper)
		}
	}
}

func TestHelperArgs(t *testing.T) {
	got := strings.Join(helperArgs(42, []configs.IDMap{{ContainerID: 0, HostID: 1000, Size: 1}, {ContainerID: 1, HostID: 100000, Size: 65536}}), " ")
	if got != "42 0 1000 1 1 100000 65536" {
		t.Errorf("helperArgs: %q", got)
	}
}

func TestPlanCgroups(t *testing.T) {
	no := func(string) bool { return false }
	yes := func(string) bool { return true }
	mem := "linux.resources.memory.limit"
	devOnly := ""

	if p, _, err := PlanCgroups([]string{"/sys/fs/cgroup/memory/husk/a"}, yes, mem, ""); err != nil || p != UseCgroups {
		t.Errorf("writable: %v %v", p, err)
	}
	p, note, err := PlanCgroups([]string{"/sys/fs/cgroup/memory/husk/a"}, no, devOnly, "")
	if err != nil || p != SkipCgroups || !strings.Contains(note, "/sys/fs/cgroup/memory/husk/a not writable") {
		t.Errorf("no limits, not writable: %v %q %v", p, note, err)
	}
	_, _, err = PlanCgroups([]string{"/x"}, no, mem, "")
	if err == nil || !strings.HasPrefix(err.Error(), "linux.resources.memory.limit: a rootless container cannot have cgroup limits") {
		t.Errorf("limit, not writable: %v", err)
	}
	_, _, err = PlanCgroups([]string{"/x"}, no, "", "/mine")
	if err == nil || !strings.HasPrefix(err.Error(), `linux.cgroupsPath: "/mine"`) {
		t.Errorf("path, not writable: %v", err)
	}
}

func TestFirstLimit(t *testing.T) {
	shares := uint64(512)
	pids := int64(10)
	for _, c := range []struct {
		r    *specs.LinuxResources
		want string
	}{
		{nil, ""},
		{&specs.LinuxResources{}, ""},
		{&specs.LinuxResources{CPU: &specs.LinuxCPU{}}, ""},
		{&specs.LinuxResources{CPU: &specs.LinuxCPU{Shares: &shares}}, "linux.resources.cpu.shares"},
		{&specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &pids}}, "linux.resources.pids"},
		{&specs.LinuxResources{Unified: map[string]string{"memory.max": "1"}}, "linux.resources.unified"},
	} {
		got := FirstLimit(c.r)
		if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("FirstLimit(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}

func TestDelegation(t *testing.T) {
	dir := t.TempDir()
	own := "/user.slice/user-1000.slice/user@1000.service/app.slice/podman.scope"
	writable := map[string]bool{}
	for _, p := range []string{"/user.slice/user-1000.slice/user@1000.service", "/user.slice/user-1000.slice/user@1000.service/app.slice", own} {
		writable[filepath.Join(dir, p)] = true
		writable[filepath.Join(dir, p, "cgroup.procs")] = true
	}
	got := Delegation(dir, own, func(p string) bool { return writable[p] })
	if got != "/user.slice/user-1000.slice/user@1000.service" {
		t.Errorf("Delegation = %q", got)
	}
	if got := Delegation(dir, "/init.scope", func(string) bool { return false }); got != "" {
		t.Errorf("no delegation: %q", got)
	}
	if got, err := OwnCgroupV2(strings.NewReader("12:cpu:/x\n0::/a/b\n")); err != nil || got != "/a/b" {
		t.Errorf("OwnCgroupV2 = %q, %v", got, err)
	}
}

func TestWritable(t *testing.T) {
	dir := t.TempDir()
	if !Writable(filepath.Join(dir, "a", "b")) {
		t.Error("a missing path under a writable dir is not writable")
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if Writable(filepath.Join(f, "x")) {
		t.Error("a path under a file is writable")
	}
}

func TestCheckDevices(t *testing.T) {
	fake := func(path string, st *unix.Stat_t) error {
		if path != "/dev/null" {
			return unix.ENOENT
		}
		st.Mode = unix.S_IFCHR | 0o666
		st.Rdev = unix.Mkdev(1, 3)
		return nil
	}
	if err := CheckDevices([]specs.LinuxDevice{{Path: "/dev/null", Type: "c", Major: 1, Minor: 3}}, fake); err != nil {
		t.Errorf("host's /dev/null: %v", err)
	}
	err := CheckDevices([]specs.LinuxDevice{{Path: "/dev/null", Type: "c", Major: 1, Minor: 3}, {Path: "/dev/fuse", Type: "c", Major: 10, Minor: 229}}, fake)
	if err == nil || !strings.HasPrefix(err.Error(), "linux.devices[1]: /dev/fuse (c 10:229): a rootless container cannot make device nodes") {
		t.Errorf("missing node: %v", err)
	}
	err = CheckDevices([]specs.LinuxDevice{{Path: "/dev/null", Type: "c", Major: 1, Minor: 5}}, fake)
	if err == nil || !strings.Contains(err.Error(), "is another device (1:3)") {
		t.Errorf("other node: %v", err)
	}
}

func TestSystemdUserBus(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	exists := func(p string) error { return nil }
	missing := func(p string) error { return os.ErrNotExist }
	if a, err := SystemdUserBus(env(map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}), missing); err != nil || a != "unix:path=/x" {
		t.Errorf("from $DBUS_SESSION_BUS_ADDRESS: %q, %v", a, err)
	}
	if a, err := SystemdUserBus(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/7"}), exists); err != nil || a != "unix:path=/run/user/7/bus" {
		t.Errorf("from $XDG_RUNTIME_DIR/bus: %q, %v", a, err)
	}
	_, err := SystemdUserBus(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/7"}), missing)
	if err == nil || !strings.Contains(err.Error(), "/run/user/7/bus does not exist") || !strings.Contains(err.Error(), "--systemd-cgroup") {
		t.Errorf("no bus: %v", err)
	}
	if _, err := SystemdUserBus(env(nil), exists); err == nil || !strings.Contains(err.Error(), "$XDG_RUNTIME_DIR") {
		t.Errorf("no environment: %v", err)
	}
}
