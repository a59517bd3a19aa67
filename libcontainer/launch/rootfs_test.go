package launch

import (
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
