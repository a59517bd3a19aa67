package specconv

import (
	"reflect"
	"slices"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func TestRecursiveMountOptions(t *testing.T) {
	for _, tc := range []struct {
		options  []string
		set, clr uint64
	}{
		{[]string{"rbind", "rro"}, unix.MOUNT_ATTR_RDONLY, 0},
		{[]string{"rbind", "rro", "rrw"}, 0, unix.MOUNT_ATTR_RDONLY},
		{[]string{"rbind", "rnosuid", "rnodev", "rnoexec"}, unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC, 0},
		{[]string{"rbind", "rsuid", "rdev", "rexec"}, 0, unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC},
		{[]string{"rbind", "rnoatime", "rnodiratime"}, unix.MOUNT_ATTR_NOATIME | unix.MOUNT_ATTR_NODIRATIME, unix.MOUNT_ATTR__ATIME},
		{[]string{"rbind", "rnoatime", "rrelatime"}, 0, unix.MOUNT_ATTR__ATIME},
		{[]string{"rbind", "rstrictatime"}, unix.MOUNT_ATTR_STRICTATIME, unix.MOUNT_ATTR__ATIME},
		{[]string{"rbind", "rnosymfollow"}, unix.MOUNT_ATTR_NOSYMFOLLOW, 0},
	} {
		c := convert(t, withSpec(func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/srv", Options: tc.options})
		}))
		m := c.Mounts[len(c.Mounts)-1]
		if m.RecAttrSet != tc.set || m.RecAttrClr != tc.clr {
			t.Errorf("%q: set %#x clear %#x, want set %#x clear %#x", tc.options, m.RecAttrSet, m.RecAttrClr, tc.set, tc.clr)
		}
		if m.Data != "" || !m.IsBind() {
			t.Errorf("%q: data %q, bind %v: a recursive option leaked into the mount data", tc.options, m.Data, m.IsBind())
		}
	}
}

// TestEveryListedMountOptionIsAccepted: `husk features` promises each of
// MountOptions; each must convert, and none may reach the mount data.
func TestEveryListedMountOptionIsAccepted(t *testing.T) {
	opts := MountOptions()
	for _, want := range []string{"ro", "rbind", "rro", "rnosymfollow", "rprivate", "nosymfollow", "defaults"} {
		if !slices.Contains(opts, want) {
			t.Errorf("MountOptions() lacks %q", want)
		}
	}
	for _, refused := range []string{"idmap", "ridmap"} {
		if slices.Contains(opts, refused) {
			t.Errorf("MountOptions() lists %q, which husk refuses", refused)
		}
	}
	for _, o := range opts {
		for _, typ := range []string{"tmpfs", "bind"} {
			c, _, err := Convert(withSpec(func(s *specs.Spec) {
				s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Type: typ, Source: "/srv", Options: []string{o}})
			}), Options{Bundle: bundle})
			if err != nil {
				t.Errorf("option %q on %s: %v", o, typ, err)
				continue
			}
			if m := c.Mounts[len(c.Mounts)-1]; m.Data != "" {
				t.Errorf("option %q on %s went to the mount data %q", o, typ, m.Data)
			}
		}
	}
}

func TestMountIDMap(t *testing.T) {
	uid := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	for _, tc := range []struct {
		name   string
		userns bool
		m      specs.Mount
		want   configs.MountIDMap
	}{
		{"explicit, bind", false, specs.Mount{Options: []string{"bind"}, UIDMappings: uid, GIDMappings: uid},
			configs.MountIDMap{UIDMappings: []configs.IDMap{{HostID: 100000, Size: 65536}}, GIDMappings: []configs.IDMap{{HostID: 100000, Size: 65536}}}},
		{"explicit on rbind is not recursive", false, specs.Mount{Options: []string{"rbind"}, UIDMappings: uid, GIDMappings: uid},
			configs.MountIDMap{UIDMappings: []configs.IDMap{{HostID: 100000, Size: 65536}}, GIDMappings: []configs.IDMap{{HostID: 100000, Size: 65536}}}},
		{"explicit with ridmap", false, specs.Mount{Options: []string{"rbind", "ridmap"}, UIDMappings: uid, GIDMappings: uid},
			configs.MountIDMap{UIDMappings: []configs.IDMap{{HostID: 100000, Size: 65536}}, GIDMappings: []configs.IDMap{{HostID: 100000, Size: 65536}}, Recursive: true}},
		{"idmap on rbind is not recursive", true, specs.Mount{Options: []string{"rbind", "idmap"}}, configs.MountIDMap{}},
		{"ridmap", true, specs.Mount{Options: []string{"bind", "ridmap"}}, configs.MountIDMap{Recursive: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Convert(withSpec(func(s *specs.Spec) {
				if tc.userns {
					s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "user"})
					s.Linux.UIDMappings, s.Linux.GIDMappings = uid, uid
				}
				m := tc.m
				m.Destination, m.Source = "/data", "/srv"
				s.Mounts = append(s.Mounts, m)
			}), Options{Bundle: bundle})
			if err != nil {
				t.Fatal(err)
			}
			got := c.Mounts[len(c.Mounts)-1].IDMap
			if got == nil || !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("IDMap = %+v, want %+v", got, tc.want)
			}
		})
	}
}
