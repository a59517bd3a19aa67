package rootfs

import (
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

func TestMountFlags(t *testing.T) {
	st := int64(unix.ST_RDONLY | unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC | unix.ST_RELATIME)
	want := unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_RELATIME
	if got := mountFlags(st); got != want {
		t.Errorf("mountFlags(%#x) = %#x, want %#x", st, got, want)
	}
	if got := mountFlags(unix.ST_NOATIME | unix.ST_NODIRATIME); got != unix.MS_NOATIME|unix.MS_NODIRATIME {
		t.Errorf("atime flags: %#x", got)
	}
	// Neither noatime nor relatime: strictatime, which statfs cannot say.
	if got := mountFlags(unix.ST_NODIRATIME); got != unix.MS_NODIRATIME|unix.MS_STRICTATIME {
		t.Errorf("strictatime: %#x", got)
	}
}

func TestFlagNames(t *testing.T) {
	if got := flagNames(unix.MS_RDONLY | unix.MS_NODIRATIME | unix.MS_RELATIME); got != "ro,nodiratime,relatime" {
		t.Errorf("flagNames = %q", got)
	}
	if got := flagNames(unix.MS_STRICTATIME); got != "strictatime" {
		t.Errorf("flagNames(strictatime) = %q", got)
	}
}

func TestDeviceMode(t *testing.T) {
	for _, tc := range []struct {
		typ  rune
		want uint32
	}{{'c', unix.S_IFCHR | 0o620}, {'u', unix.S_IFCHR | 0o620}, {'b', unix.S_IFBLK | 0o620}, {'p', unix.S_IFIFO | 0o620}} {
		got, err := deviceMode(&configs.Device{Type: tc.typ, FileMode: 0o620})
		if err != nil || got != tc.want {
			t.Errorf("deviceMode(%q) = %o, %v; want %o", tc.typ, got, err, tc.want)
		}
	}
	if _, err := deviceMode(&configs.Device{Type: 'x'}); err == nil || !strings.Contains(err.Error(), `'x'`) {
		t.Errorf("unknown type: %v", err)
	}
}

func TestHostFallback(t *testing.T) {
	withNet := &configs.Config{Namespaces: []configs.Namespace{{Type: configs.NEWNET}, {Type: configs.NEWIPC}}}
	joined := &configs.Config{Namespaces: []configs.Namespace{{Type: configs.NEWNET, Path: "/proc/1/ns/net"}}}
	for _, tc := range []struct {
		c      *configs.Config
		device string
		want   string
	}{
		{withNet, "sysfs", ""}, {withNet, "mqueue", ""},
		{joined, "sysfs", "/sys"}, {joined, "mqueue", "/dev/mqueue"},
		{joined, "proc", ""},
	} {
		if got := hostFallback(tc.c, &configs.Mount{Device: tc.device}); got != tc.want {
			t.Errorf("hostFallback(%s, %v) = %q, want %q", tc.device, tc.c.Namespaces, got, tc.want)
		}
	}
	b := fallbackBind(&configs.Mount{Source: "sysfs", Device: "sysfs", Flags: unix.MS_RDONLY, Data: "x"}, "/sys")
	if b.Source != "/sys" || b.Device != "bind" || b.Flags != unix.MS_RDONLY|unix.MS_BIND|unix.MS_REC || b.Data != "" {
		t.Errorf("fallbackBind = %+v", b)
	}
}

func TestHierarchyKey(t *testing.T) {
	own := map[string]string{"cpu,cpuacct": "/a", "name=systemd": "/b", "memory": "/c", "pids": "/d", "": "/e"}
	for opts, want := range map[string]string{
		"rw,cpu,cpuacct":        "cpu,cpuacct",
		"rw,xattr,name=systemd": "name=systemd",
		"ro,memory":             "memory",
		"rw,release_agent=/x,clone_children,pids": "pids",
	} {
		got, ok := hierarchyKey(&mountinfo.Info{FSType: "cgroup", VFSOptions: opts}, own)
		if !ok || got != want {
			t.Errorf("hierarchyKey(%q) = %q, %v; want %q", opts, got, ok, want)
		}
	}
	if got, ok := hierarchyKey(&mountinfo.Info{FSType: "cgroup2", VFSOptions: "rw,nsdelegate"}, own); !ok || got != "" {
		t.Errorf("cgroup2: %q, %v", got, ok)
	}
	if got, ok := hierarchyKey(&mountinfo.Info{FSType: "cgroup", VFSOptions: "rw,blkio"}, own); ok {
		t.Errorf("blkio matched %q", got)
	}
}

func TestMountSource(t *testing.T) {
	if got := mountSource(&configs.Mount{Device: "proc"}); got != "proc" {
		t.Errorf("no source: %q", got)
	}
	if got := mountSource(&configs.Mount{Source: "/a", Device: "bind"}); got != "/a" {
		t.Errorf("source: %q", got)
	}
}
