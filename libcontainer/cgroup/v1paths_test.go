package cgroup

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
)

// fakeMountinfo makes /proc/self/mountinfo lines of mounts, each given as
// "mountpoint superoptions fstype".
func fakeMountinfo(mounts ...string) string {
	var b strings.Builder
	for i, m := range mounts {
		f := strings.Fields(m)
		fmt.Fprintf(&b, "%d 23 0:%d / %s rw,relatime - %s %s %s\n", 30+i, 40+i, f[0], f[2], f[2], f[1])
	}
	return b.String()
}

// The usual hybrid host: controllers paired in one hierarchy, systemd's
// named one, cgroup2 at unified.
var debianHybrid = []string{
	"/sys/fs/cgroup rw,mode=755 tmpfs",
	"/sys/fs/cgroup/cpu,cpuacct rw,cpu,cpuacct cgroup",
	"/sys/fs/cgroup/devices rw,devices cgroup",
	"/sys/fs/cgroup/memory rw,memory cgroup",
	"/sys/fs/cgroup/systemd rw,xattr,name=systemd cgroup",
	"/sys/fs/cgroup/unified rw,nsdelegate cgroup2",
	"/run/elsewhere/memory rw,memory cgroup",
}

func TestV1PathsFrom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mounts []string
		hybrid bool
		want   map[string]string // nil: not ok
	}{
		{"hybrid", debianHybrid, true, map[string]string{
			"cpu":          "/sys/fs/cgroup/cpu,cpuacct/husk/x",
			"cpuacct":      "/sys/fs/cgroup/cpu,cpuacct/husk/x",
			"devices":      "/sys/fs/cgroup/devices/husk/x",
			"memory":       "/sys/fs/cgroup/memory/husk/x",
			"name=systemd": "/sys/fs/cgroup/systemd/husk/x",
			"":             "/sys/fs/cgroup/unified/husk/x",
		}},
		{"v1", debianHybrid, false, map[string]string{
			"cpu":          "/sys/fs/cgroup/cpu,cpuacct/husk/x",
			"cpuacct":      "/sys/fs/cgroup/cpu,cpuacct/husk/x",
			"devices":      "/sys/fs/cgroup/devices/husk/x",
			"memory":       "/sys/fs/cgroup/memory/husk/x",
			"name=systemd": "/sys/fs/cgroup/systemd/husk/x",
		}},
		{"a hierarchy mounted twice: the mount named after the controller", []string{
			"/sys/fs/cgroup rw tmpfs",
			"/sys/fs/cgroup/cpu,cpuacct rw,cpu,cpuacct cgroup",
			"/sys/fs/cgroup/cpuacct rw,cpu,cpuacct cgroup",
			"/sys/fs/cgroup/devices rw,devices cgroup",
		}, false, map[string]string{
			"cpu":     "/sys/fs/cgroup/cpu,cpuacct/husk/x",
			"cpuacct": "/sys/fs/cgroup/cpuacct/husk/x",
			"devices": "/sys/fs/cgroup/devices/husk/x",
		}},
		{"root not a tmpfs", []string{
			"/sys/fs/cgroup/devices rw,devices cgroup",
		}, false, nil},
		{"a hierarchy below another directory", []string{
			"/sys/fs/cgroup rw tmpfs",
			"/sys/fs/cgroup/devices rw,devices cgroup",
			"/sys/fs/cgroup/more/memory rw,memory cgroup",
		}, false, nil},
		{"no devices hierarchy", []string{
			"/sys/fs/cgroup rw tmpfs",
			"/sys/fs/cgroup/memory rw,memory cgroup",
		}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := v1PathsFrom(strings.NewReader(fakeMountinfo(tc.mounts...)), "/husk/x", tc.hybrid, nil)
			if ok != (tc.want != nil) || !maps.Equal(got, tc.want) {
				t.Errorf("got %v (ok %v), want %v", got, ok, tc.want)
			}
		})
	}
}

// A relative cgroupsPath (and the default, the id) is placed under husk's
// own cgroup in each hierarchy, as the library places it.
func TestV1PathsRelative(t *testing.T) {
	own := ownCgroups("12:devices:/d\n4:cpu,cpuacct:/c/pu\n3:memory:/process_api/h\n1:name=systemd:/\n0::/u\n")
	want := map[string]string{
		"cpu":          "/sys/fs/cgroup/cpu,cpuacct/c/pu/x",
		"cpuacct":      "/sys/fs/cgroup/cpu,cpuacct/c/pu/x",
		"devices":      "/sys/fs/cgroup/devices/d/x",
		"memory":       "/sys/fs/cgroup/memory/process_api/h/x",
		"name=systemd": "/sys/fs/cgroup/systemd/x",
		"":             "/sys/fs/cgroup/unified/x",
	}
	got, ok := v1PathsFrom(strings.NewReader(fakeMountinfo(debianHybrid...)), "x", true, own)
	if !ok || !maps.Equal(got, want) {
		t.Errorf("got %v (ok %v), want %v", got, ok, want)
	}
	// Left to the library: a hierarchy mounted twice; a controller
	// missing from /proc/self/cgroup; husk's own cgroup outside the
	// mount's root (a bind of a subtree, with husk not in it).
	twice := append([]string{}, debianHybrid...)
	twice = append(twice, "/sys/fs/cgroup/cpuacct rw,cpu,cpuacct cgroup")
	if got, ok := v1PathsFrom(strings.NewReader(fakeMountinfo(twice...)), "x", true, own); ok {
		t.Errorf("a hierarchy mounted twice: got %v, want the library's", got)
	}
	delete(own, "memory")
	if got, ok := v1PathsFrom(strings.NewReader(fakeMountinfo(debianHybrid...)), "x", true, own); ok {
		t.Errorf("no memory line: got %v, want the library's", got)
	}
	own["memory"] = "/other"
	sub := strings.Replace(fakeMountinfo(debianHybrid...), " / /sys/fs/cgroup/memory ", " /sub /sys/fs/cgroup/memory ", 1)
	if got, ok := v1PathsFrom(strings.NewReader(sub), "x", true, own); ok {
		t.Errorf("own cgroup outside the mount's root: got %v, want the library's", got)
	}
}

// On this host, v1Paths gives exactly the map the library computes.
func TestV1PathsMatchLibrary(t *testing.T) {
	layout := HostLayout()
	if layout == V2 {
		t.Skip("pure cgroup v2 host: no v1 hierarchies to place")
	}
	for _, inner := range []string{"/husk/x", "/a/b/c", "x", "a/b"} {
		lib, err := fs.NewManager(&cgroups.Cgroup{Path: inner, Resources: &cgroups.Resources{}}, nil)
		if err != nil {
			t.Fatalf("library: %v", err)
		}
		got, ok := v1Paths(inner, layout)
		if !ok {
			t.Fatalf("%s: v1Paths left it to the library on this host", inner)
		}
		if want := lib.GetPaths(); !maps.Equal(got, want) {
			t.Errorf("%s: got %v, library %v", inner, got, want)
		}
	}
}
