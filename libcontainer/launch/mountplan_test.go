package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/husk-runtime/husk/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// exampleConfig is `husk spec`'s config on a rootfs of its own, its
// mounts edited by edit.
func exampleConfig(t *testing.T, edit func(s *specs.Spec)) *configs.Config {
	t.Helper()
	bundle := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bundle, "rootfs", "srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := specconv.Example()
	if edit != nil {
		edit(s)
	}
	c, _, err := specconv.Convert(s, specconv.Options{Bundle: bundle})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func withoutCgroup(s *specs.Spec) {
	s.Mounts = slices.DeleteFunc(s.Mounts, func(m specs.Mount) bool { return m.Type == "cgroup" })
}

func TestMountPlanExample(t *testing.T) {
	c := exampleConfig(t, func(s *specs.Spec) {
		withoutCgroup(s)
		s.Mounts = append(s.Mounts,
			specs.Mount{Destination: "/data", Source: "/tmp", Options: []string{"rbind", "ro", "rprivate"}},
			specs.Mount{Destination: "/srv/in", Source: filepath.Join(s.Root.Path, "srv"), Options: []string{"bind"}})
	})
	p, err := NewMountPlan(c, MountEnv{})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(c.Rootfs)
	if p.Root != root {
		t.Errorf("root %q, want %q", p.Root, root)
	}
	type want struct {
		dest   string
		kind   bootstrap.MountKind
		dk     bootstrap.MountDest
		opts   uint32
		source string
		flags  uint32
	}
	nse := uint32(unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV)
	wants := []want{
		{"/proc", bootstrap.MountFS, bootstrap.DestRealDir, 0, "proc", 0},
		{"/dev", bootstrap.MountFS, bootstrap.DestCovered, 0, "tmpfs", unix.MS_NOSUID | unix.MS_STRICTATIME},
		{"/dev/pts", bootstrap.MountFS, bootstrap.DestDir, 0, "devpts", unix.MS_NOSUID | unix.MS_NOEXEC},
		{"/dev/shm", bootstrap.MountFS, bootstrap.DestCovered, 0, "shm", nse},
		{"/dev/mqueue", bootstrap.MountFS, bootstrap.DestDir, 0, "mqueue", nse},
		{"/sys", bootstrap.MountFS, bootstrap.DestRealDir, 0, "sysfs", nse | unix.MS_RDONLY},
		{"/data", bootstrap.MountBind, bootstrap.DestBySource, 0, "/tmp", unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY},
		{"/srv/in", bootstrap.MountBind, bootstrap.DestBySource, bootstrap.MountInRoot, "/srv", unix.MS_BIND},
	}
	if len(p.Mounts) < len(wants) || p.Mounts[len(wants)].Device == nil {
		t.Fatalf("%d steps, want %d mounts, then the devices: %+v", len(p.Mounts), len(wants), p.Mounts)
	}
	for i, w := range wants {
		s := p.Mounts[i]
		if s.Destination != w.dest || s.Kind != w.kind || s.Dest != w.dk || s.Opts != w.opts || s.Source != w.source || s.Index != uint32(i) || s.Fd != -1 {
			t.Errorf("step %d: %+v, want %+v", i, s, w)
		}
		if w.flags != 0 && s.Flags != w.flags {
			t.Errorf("step %d (%s): flags %#x, want %#x", i, w.dest, s.Flags, w.flags)
		}
	}
	if got := p.Mounts[6].Propagation; !slices.Equal(got, []uint32{unix.MS_PRIVATE | unix.MS_REC}) {
		t.Errorf("/data propagation %#x", got)
	}
	if _, err := p.Encode(); err != nil {
		t.Fatal(err)
	}
}

// A tmpfs without mode= takes the covered directory's, with tmpcopyup its
// content too; a read-only /dev tmpfs is mounted
// writable (made read-only once filled); sysfs without a network
// namespace of its own gets the host's /sys as its fallback.
func TestMountPlanDecisions(t *testing.T) {
	c := exampleConfig(t, func(s *specs.Spec) {
		withoutCgroup(s)
		s.Mounts[1].Options = append(s.Mounts[1].Options, "ro")
		s.Mounts[3].Options = []string{"nosuid", "size=1m", "tmpcopyup"}
		s.Linux.Namespaces = slices.DeleteFunc(s.Linux.Namespaces, func(n specs.LinuxNamespace) bool { return n.Type == specs.NetworkNamespace })
	})
	p, err := NewMountPlan(c, MountEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if dev := p.Mounts[1]; dev.Flags&unix.MS_RDONLY != 0 || dev.Opts&bootstrap.MountTmpfsMode != 0 {
		t.Errorf("/dev (ro, mode=755): flags %#x opts %#x, want writable, its own mode", dev.Flags, dev.Opts)
	}
	if shm := p.Mounts[3]; shm.Opts != bootstrap.MountTmpfsMode|bootstrap.MountCopyUp {
		t.Errorf("/dev/shm without mode=, tmpcopyup: opts %#x, want the covered directory's mode and its copy", shm.Opts)
	}
	if sys := p.Mounts[5]; sys.Fallback != "/sys" {
		t.Errorf("/sys without a netns: fallback %q, want /sys", sys.Fallback)
	}
}

// linux.mountLabel: context= in the data where Go init adds it, on
// mqueue's root instead.
func TestMountPlanLabel(t *testing.T) {
	const l = "system_u:object_r:container_file_t:s0:c1,c2"
	c := exampleConfig(t, func(s *specs.Spec) {
		withoutCgroup(s)
		s.Linux.MountLabel = l
	})
	p, err := NewMountPlan(c, MountEnv{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Mounts {
		if s.Kind != bootstrap.MountFS {
			continue // the nodes, the links, the cwd after the mounts
		}
		labelled := strings.Contains(s.Data, `context="`+l+`"`)
		if want := s.FSType != "proc" && s.FSType != "sysfs" && s.FSType != "mqueue"; labelled != want || s.Opts&bootstrap.MountLabelled == 0 {
			t.Errorf("%s: data %q, opts %#x", s.Destination, s.Data, s.Opts)
		}
		if want := map[bool]string{true: l}[s.FSType == "mqueue"]; s.RootLabel != want {
			t.Errorf("%s: root label %q, want %q", s.Destination, s.RootLabel, want)
		}
	}
	if _, err := p.Encode(); err != nil {
		t.Fatal(err)
	}
}

func TestMountPlanNoMountNamespace(t *testing.T) {
	c := exampleConfig(t, func(s *specs.Spec) {
		s.Mounts = nil
		s.Linux.Namespaces = slices.DeleteFunc(s.Linux.Namespaces, func(n specs.LinuxNamespace) bool { return n.Type == specs.MountNamespace })
		s.Linux.MaskedPaths, s.Linux.ReadonlyPaths = nil, nil
	})
	if p, err := NewMountPlan(c, MountEnv{}); p != nil || err != nil {
		t.Fatalf("got %+v, %v; want nothing", p, err)
	}
}

func TestMountPlanErrors(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, tc := range []struct {
		name string
		edit func(s *specs.Spec)
		fds  map[int]int32
		want string
	}{
		{"cgroup, the container's cgroups unknown", nil, nil, `mounts[6] (/sys/fs/cgroup): type cgroup: the container's cgroups are not known`},
		{"tmpcopyup with an option fsconfig cannot take", func(s *specs.Spec) {
			withoutCgroup(s)
			s.Mounts[3].Options = append(s.Mounts[3].Options, "size="+long, "tmpcopyup")
		}, nil, `mounts[3] (/dev/shm): remount, iversion or an option over 255 bytes: not with tmpcopyup`},
		{"five propagation options", func(s *specs.Spec) {
			withoutCgroup(s)
			s.Mounts[3].Options = append(s.Mounts[3].Options, "private", "shared", "slave", "private", "unbindable")
		}, nil, `mounts[3]: 5 propagation options, over the 4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMountPlan(exampleConfig(t, tc.edit), MountEnv{Fds: tc.fds})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// With a user namespace a bind's source is the parent's fd: a detached
// tree when idmapped.
func TestMountPlanSourceFd(t *testing.T) {
	c := exampleConfig(t, func(s *specs.Spec) {
		withoutCgroup(s)
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
		s.Linux.GIDMappings = s.Linux.UIDMappings
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/tmp", Options: []string{"bind", "idmap"}})
	})
	p, err := NewMountPlan(c, MountEnv{Fds: map[int]int32{6: 42}})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Mounts[6]
	if s.Kind != bootstrap.MountBindFd || s.Fd != 42 || s.Opts&bootstrap.MountDetached == 0 || s.Opts&bootstrap.MountAsk != 0 {
		t.Fatalf("step %+v, want the fd 42, detached", s)
	}
	// Without an fd given, the launcher asks for it when it gets there.
	if p, err = NewMountPlan(c, MountEnv{}); err != nil {
		t.Fatal(err)
	}
	if s := p.Mounts[6]; s.Kind != bootstrap.MountBindFd || s.Fd != -1 || s.Opts&bootstrap.MountAsk == 0 {
		t.Fatalf("step %+v, want one asked for", s)
	}
}

func TestSplitMountData(t *testing.T) {
	for data, want := range map[string][]string{
		"":                               nil,
		"size=65536k":                    {"size=65536k"},
		"newinstance,ptmxmode=0666,,":    {"newinstance", "ptmxmode=0666"},
		`mode=755,context="s0:c1,c2",ro`: {"mode=755", "context=s0:c1,c2", "ro"},
	} {
		if got := SplitMountData(data); !slices.Equal(got, want) {
			t.Errorf("SplitMountData(%q) = %q, want %q", data, got, want)
		}
	}
}

// A cgroup mount as Go init makes it on this host's layout: with v1 a
// tmpfs, one step per hierarchy (a cgroup filesystem in a cgroup
// namespace, else a bind of the container's directory), the tmpfs made
// read-only last; with v2 one step.
func TestMountPlanCgroup(t *testing.T) {
	own := map[string]string{"": "/c"}
	hierarchies, err := rootfs.CgroupHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hierarchies {
		if h.FSType == "cgroup" {
			for _, o := range strings.Split(h.VFSOptions, ",") {
				if o != "rw" && o != "ro" {
					own[o] = "/c/" + o
				}
			}
		}
	}
	for _, cgroupns := range []bool{true, false} {
		c := exampleConfig(t, func(s *specs.Spec) {
			if cgroupns {
				s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.CgroupNamespace})
			}
		})
		p, err := NewMountPlan(c, MountEnv{Cgroups: own})
		if err != nil {
			t.Fatal(err)
		}
		var steps []bootstrap.MountStep
		for _, s := range p.Mounts {
			if strings.HasPrefix(s.Head, "mounts[6]:") {
				steps = append(steps, s)
			}
		}
		head := `mounts[6]: error mounting "cgroup" to rootfs at "/sys/fs/cgroup"`
		if rootfs.CgroupV2() {
			if len(steps) != 1 || (cgroupns && steps[0].FSType != "cgroup2") || (!cgroupns && steps[0].Source != "/sys/fs/cgroup/c") {
				t.Errorf("cgroupns %v: v2 steps %+v", cgroupns, steps)
			}
			continue
		}
		if first := steps[0]; first.FSType != "tmpfs" || first.Flags&unix.MS_RDONLY != 0 || first.Head != head+": tmpfs" || first.Data != "mode=755" {
			t.Errorf("cgroupns %v: first step %+v, want a writable tmpfs", cgroupns, first)
		}
		if last := steps[len(steps)-1]; last.Kind != bootstrap.MountRemount || last.Flags&unix.MS_RDONLY == 0 || last.Head != head {
			t.Errorf("cgroupns %v: last step %+v, want the read-only remount", cgroupns, last)
		}
		n := 0
		for _, s := range steps[1 : len(steps)-1] {
			switch {
			case s.Kind == bootstrap.MountSymlink:
				continue
			case cgroupns && (s.Kind != bootstrap.MountFS || !strings.HasPrefix(s.FSType, "cgroup")):
				t.Errorf("in a cgroup namespace: %+v", s)
			case !cgroupns && (s.Kind != bootstrap.MountBind || !strings.HasPrefix(s.Source, "/sys/fs/cgroup/") || !strings.Contains(s.Source, "/c")):
				t.Errorf("without a cgroup namespace: %+v", s)
			}
			n++
		}
		if n != len(hierarchies) {
			t.Errorf("cgroupns %v: %d hierarchy steps, want %d", cgroupns, n, len(hierarchies))
		}
	}
}

// After the mounts, as Go init's buildRoot: a /dev tmpfs's nodes
// (linux.devices) and symlinks (ptmx replaced), then a missing cwd.
func TestMountPlanAfterMounts(t *testing.T) {
	c := exampleConfig(t, func(s *specs.Spec) {
		withoutCgroup(s)
		s.Process.Cwd = "/work/here"
		s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/mine", Type: "c", Major: 1, Minor: 3, FileMode: ptr(os.FileMode(0o600)), UID: ptr(uint32(7)), GID: ptr(uint32(8))}}
	})
	p, err := NewMountPlan(c, MountEnv{})
	if err != nil {
		t.Fatal(err)
	}
	var devices, links []string
	for _, s := range p.Mounts {
		switch {
		case s.Device != nil:
			devices = append(devices, fmt.Sprintf("%s %o %d:%d %d:%d", s.Destination, s.Device.Mode, unix.Major(s.Device.Rdev), unix.Minor(s.Device.Rdev), s.Device.UID, s.Device.GID))
		case s.Kind == bootstrap.MountSymlink:
			links = append(links, fmt.Sprintf("%s/%s -> %s %d", s.Destination, s.Data, s.Source, s.Opts))
		}
	}
	if !slices.Contains(devices, "/dev/mine 20600 1:3 7:8") || !slices.Contains(devices, "/dev/null 20666 1:3 0:0") {
		t.Errorf("devices %q", devices)
	}
	if !slices.Contains(links, "/dev/fd -> /proc/self/fd 0") || !slices.Contains(links, fmt.Sprintf("/dev/ptmx -> pts/ptmx %d", bootstrap.MountReplace)) {
		t.Errorf("links %q", links)
	}
	if last := p.Mounts[len(p.Mounts)-1]; last.Kind != bootstrap.MountMkdir || last.Destination != "/work/here" || last.Head != `process.cwd "/work/here": make it in the rootfs` {
		t.Errorf("last step %+v, want the cwd", last)
	}
	if _, err := p.Encode(); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// What fsconfig(2) cannot say (remount, iversion, an option over its
// bound) is a mount(2), as runc's.
func TestMountPlanLegacy(t *testing.T) {
	long := strings.Repeat("a", 300)
	for name, opts := range map[string][]string{
		"iversion": {"iversion"}, "remount": {"remount", "ro"}, "a long option": {"size=" + long},
	} {
		c := exampleConfig(t, func(s *specs.Spec) {
			withoutCgroup(s)
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/t", Type: "tmpfs", Source: "tmpfs", Options: opts})
		})
		p, err := NewMountPlan(c, MountEnv{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, st := range p.Mounts {
			if legacy := st.Opts&bootstrap.MountLegacy != 0; legacy != (st.Destination == "/t") {
				t.Errorf("%s: step %+v: mount(2) %v", name, st, legacy)
			}
		}
	}
}
