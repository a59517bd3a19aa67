package cgroup

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
	devcfg "github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// The device rules on v2: the library's eBPF program for each rule list,
// loaded through this kernel's verifier and attached to a directory of
// the unified hierarchy (on a hybrid host the kernel applies it on top
// of the v1 devices controller), then probed by a shell moved into it.
func TestDeviceProgramKernel(t *testing.T) {
	needRoot(t)
	root := unifiedMount(t)
	rule := func(typ rune, major, minor int64, access string, allow bool) *configs.DeviceRule {
		return &configs.DeviceRule{Type: devcfg.Type(typ), Major: major, Minor: minor, Permissions: devcfg.Permissions(access), Allow: allow}
	}
	null := rule('c', 1, 3, "rwm", true)
	zero := rule('c', 1, 5, "rwm", true)
	denyAll := rule('a', -1, -1, "rwm", false)
	allowAll := rule('a', -1, -1, "rwm", true)
	// probe prints null and/or zero for each it could open for reading.
	const probe = `(exec 3</dev/null) 2>&- && echo null; (exec 3</dev/zero) 2>&- && echo zero; true`
	for _, tc := range []struct {
		name  string
		rules []*configs.DeviceRule
		want  string // the probe's output; "-" when not probed
	}{
		{"no rules", nil, ""},
		{"only null", []*configs.DeviceRule{null}, "null\n"},
		{"null and zero", []*configs.DeviceRule{null, zero}, "null\nzero\n"},
		{"runc's defaults", configs.DefaultDeviceRules(), "null\nzero\n"},
		{"deny all then defaults", append([]*configs.DeviceRule{denyAll}, configs.DefaultDeviceRules()...), "null\nzero\n"},
		{"defaults then deny all", append(configs.DefaultDeviceRules(), denyAll), ""},
		{"allow all", []*configs.DeviceRule{allowAll}, "null\nzero\n"},
		{"allow all, deny zero", []*configs.DeviceRule{allowAll, rule('c', 1, 5, "rwm", false)}, "null\n"},
		{"allow all, deny zero's write only", []*configs.DeviceRule{allowAll, rule('c', 1, 5, "w", false)}, "null\nzero\n"},
		{"null write only", []*configs.DeviceRule{rule('c', 1, 3, "w", true)}, ""},
		{"char wildcard minor", []*configs.DeviceRule{rule('c', 1, -1, "r", true)}, "null\nzero\n"},
		{"char wildcard major", []*configs.DeviceRule{rule('c', -1, 3, "r", true)}, "null\n"},
		{"block device, mknod only", []*configs.DeviceRule{rule('b', 7, 0, "rw", true), rule('b', -1, -1, "m", true)}, ""},
		{"every access split in rules", []*configs.DeviceRule{rule('c', 1, 3, "r", true), rule('c', 1, 3, "w", true), rule('c', 1, 3, "m", true)}, "null\n"},
		{"many rules", manyRules(200), "null\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := tc.rules
			if err := checkDeviceRules(rules); err != nil {
				t.Fatal(err)
			}
			dir := testDir(t, root)
			if err := cgroups.DevicesSetV2(dir, &cgroups.Resources{Devices: rules}); err != nil {
				t.Fatalf("load and attach: %v", err)
			}
			if got := inCgroup(t, dir, probe); got != tc.want {
				t.Errorf("shell printed %q, want %q", got, tc.want)
			}
			// A second set replaces the program: one stays attached.
			if err := cgroups.DevicesSetV2(dir, &cgroups.Resources{Devices: rules}); err != nil {
				t.Fatalf("second set: %v", err)
			}
			if n := attachedDevicePrograms(t, dir); n != 1 {
				t.Errorf("%d programs attached after a second set; want 1", n)
			}
		})
	}
}

// manyRules is n distinct char device rules ahead of /dev/null's.
func manyRules(n int) []*configs.DeviceRule {
	var out []*configs.DeviceRule
	for i := range n {
		out = append(out, &configs.DeviceRule{Type: devcfg.CharDevice, Major: 200, Minor: int64(i), Permissions: "rw", Allow: true})
	}
	return append(out, &configs.DeviceRule{Type: devcfg.CharDevice, Major: 1, Minor: 3, Permissions: "rwm", Allow: true})
}

func attachedDevicePrograms(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	res, err := link.QueryPrograms(link.QueryOptions{Target: fd, Attach: ebpf.AttachCGroupDevice})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Programs)
}

func TestDeviceRulesRefused(t *testing.T) {
	for _, r := range []*configs.DeviceRule{
		{Type: 'p', Major: 1, Minor: 1, Permissions: "r", Allow: true},
		{Type: 'c', Major: 1, Minor: 1, Permissions: "x", Allow: true},
		{Type: 'c', Major: 1, Minor: 1, Permissions: "wr", Allow: true},
		{Type: 'c', Major: 1, Minor: 1, Permissions: "", Allow: true},
	} {
		if err := checkDeviceRules([]*configs.DeviceRule{r}); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}
