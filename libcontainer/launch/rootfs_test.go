package launch

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// What pid 1 finishes of the root: paths cleaned, the read-only /dev
// named as errors name it; nothing without a mount namespace.
func TestPlanRootfs(t *testing.T) {
	cfg := &configs.Config{
		Namespaces: []configs.Namespace{{Type: configs.NEWNS}},
		Mounts:     []*configs.Mount{{Source: "proc", Destination: "/proc", Device: "proc"}, {Source: "tmpfs", Destination: "/dev/", Device: "tmpfs", Flags: unix.MS_RDONLY}},
		MaskPaths:  []string{"/proc/kcore", "/proc//acpi/", "/a/../proc/keys"}, ReadonlyPaths: []string{"/proc/sys/."},
		Readonlyfs: true, MountLabel: "system_u:object_r:container_file_t:s0",
	}
	got, err := PlanRootfs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := &bootstrap.PlanRootfs{Masked: []string{"/proc/kcore", "/proc/acpi", "/proc/keys"}, Readonly: []string{"/proc/sys"},
		MountLabel: cfg.MountLabel, ReadonlyDev: `mounts[1]: error mounting "tmpfs" to rootfs at "/dev/"`, ReadonlyRoot: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	cfg.Namespaces = nil
	if got, err := PlanRootfs(cfg); got != nil || err != nil {
		t.Errorf("without a mount namespace: %+v, %v", got, err)
	}
}

// A hostile config: every path or label the launcher could not take is
// refused here, naming the field.
func TestPlanRootfsRefuses(t *testing.T) {
	many := make([]string, bootstrap.PlanMaxPaths+1)
	for i := range many {
		many[i] = "/a"
	}
	for _, tc := range []struct {
		edit func(*configs.Config)
		want string
	}{
		{func(c *configs.Config) { c.MaskPaths = []string{"/a", "/b\x00/etc"} }, `linux.maskedPaths[1] "/b\x00/etc": contains a NUL byte`},
		{func(c *configs.Config) { c.ReadonlyPaths = []string{"proc/sys"} }, `linux.readonlyPaths[0]: must be absolute, got "proc/sys"`},
		{func(c *configs.Config) { c.MaskPaths = []string{"/" + strings.Repeat("a", 4096)} }, "linux.maskedPaths[0]: 4097 bytes, over the 4095"},
		{func(c *configs.Config) { c.MaskPaths = many }, "linux.maskedPaths: 4097 paths, over the 4096 husk takes"},
		{func(c *configs.Config) { c.MountLabel = "a\x00b" }, `linux.mountLabel "a\x00b": contains a NUL byte`},
		{func(c *configs.Config) { c.MountLabel = strings.Repeat("a", 4095) }, "linux.mountLabel: 4095 bytes, over the 4094"},
	} {
		cfg := &configs.Config{Namespaces: []configs.Namespace{{Type: configs.NEWNS}}}
		tc.edit(cfg)
		if _, err := PlanRootfs(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// Host and domain names and the sysctls, sorted by key; a hostile
// config is refused naming the field.
func TestPlanSystem(t *testing.T) {
	cfg := &configs.Config{Hostname: "box", Domainname: "example.org",
		Sysctl: map[string]string{"net.ipv4.ip_forward": "1", "kernel.shmmax": "4096", "fs.mqueue.queues_max": ""}}
	got, err := PlanSystem(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := &bootstrap.PlanSystem{Hostname: "box", Domainname: "example.org", Sysctls: []bootstrap.PlanSysctl{
		{Key: "fs.mqueue.queues_max"}, {Key: "kernel.shmmax", Value: "4096"}, {Key: "net.ipv4.ip_forward", Value: "1"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	many := map[string]string{}
	for i := 0; i <= bootstrap.PlanMaxSysctls; i++ {
		many[fmt.Sprint("k", i)] = ""
	}
	for _, tc := range []struct {
		cfg  *configs.Config
		want string
	}{
		{&configs.Config{Hostname: "a\x00b"}, `hostname "a\x00b": contains a NUL byte`},
		{&configs.Config{Domainname: strings.Repeat("d", 4096)}, "domainname: 4096 bytes, over the 4095"},
		{&configs.Config{Sysctl: map[string]string{"": "1"}}, `linux.sysctl[""]: an empty key`},
		{&configs.Config{Sysctl: map[string]string{"kernel.x\x00": "1"}}, `linux.sysctl["kernel.x\x00"] "kernel.x\x00": contains a NUL byte`},
		{&configs.Config{Sysctl: map[string]string{"kernel.x": strings.Repeat("1", 4096)}}, `linux.sysctl["kernel.x"] value: 4096 bytes`},
		{&configs.Config{Sysctl: many}, "linux.sysctl: 4097 sysctls, over the 4096 husk takes"},
	} {
		if _, err := PlanSystem(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
