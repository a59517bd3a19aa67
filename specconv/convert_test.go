package specconv

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

const bundle = "/run/bundles/b1"

func contains(err error, want string) bool {
	return err != nil && strings.Contains(err.Error(), want)
}

// convert converts s, failing the test on an error or a warning.
func convert(t *testing.T, s *specs.Spec) *configs.Config {
	t.Helper()
	c, warnings, err := Convert(s, Options{Bundle: bundle})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("Convert warnings: %q", warnings)
	}
	return c
}

// withSpec returns Example() changed by edit.
func withSpec(edit func(s *specs.Spec)) *specs.Spec {
	s := Example()
	edit(s)
	return s
}

func TestConvertExample(t *testing.T) {
	got := convert(t, Example())
	nosed := unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV
	defaultCaps := []string{"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"}
	want := &configs.Config{
		OCIVersion: specs.Version,
		Rootfs:     bundle + "/rootfs",
		Readonlyfs: true,
		Namespaces: []configs.Namespace{
			{Type: configs.NEWPID}, {Type: configs.NEWNET}, {Type: configs.NEWIPC},
			{Type: configs.NEWUTS}, {Type: configs.NEWNS},
		},
		Mounts: []*configs.Mount{
			{Source: "proc", Destination: "/proc", Device: "proc"},
			{Source: "tmpfs", Destination: "/dev", Device: "tmpfs",
				Flags: unix.MS_NOSUID | unix.MS_STRICTATIME, Data: "mode=755,size=65536k"},
			{Source: "devpts", Destination: "/dev/pts", Device: "devpts",
				Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: "newinstance,ptmxmode=0666,mode=0620,gid=5"},
			{Source: "shm", Destination: "/dev/shm", Device: "tmpfs", Flags: nosed, Data: "mode=1777,size=65536k"},
			{Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: nosed},
			{Source: "sysfs", Destination: "/sys", Device: "sysfs", Flags: nosed | unix.MS_RDONLY},
			{Source: "cgroup", Destination: "/sys/fs/cgroup", Device: "cgroup", Flags: nosed | unix.MS_RELATIME | unix.MS_RDONLY},
		},
		Devices:       defaultDevices(),
		MaskPaths:     Example().Linux.MaskedPaths,
		ReadonlyPaths: []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
		Hostname:      "husk",
		Process: &configs.Process{
			Args: []string{"sh"},
			Env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"},
			Cwd:  "/",
			Capabilities: &configs.Capabilities{
				Bounding: defaultCaps, Effective: defaultCaps, Permitted: defaultCaps,
			},
			NoNewPrivileges: true,
			Rlimits:         []configs.Rlimit{{Type: unix.RLIMIT_NOFILE, Hard: 1024, Soft: 1024}},
			Terminal:        true,
		},
	}
	// runc's deny-all device rule: the cgroup conversion is tested in
	// cgroups_test.go; here only that it is there.
	if got.Cgroup == nil || len(got.Cgroup.Resources.Devices) == 0 || got.Cgroup.Resources.Devices[0].Allow {
		t.Errorf("cgroup %+v: want runc's deny-all device rule first", got.Cgroup)
	}
	want.Cgroup = got.Cgroup
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Convert(Example()) =\n%s\nwant\n%s", dump(got), dump(want))
	}
}

func TestExampleIsRuncLike(t *testing.T) {
	s := Example()
	if !s.Process.Terminal {
		t.Error("terminal is false; runc's spec has true")
	}
	if r := s.Linux.Resources; r == nil || len(r.Devices) != 1 || r.Devices[0].Allow || r.Devices[0].Access != "rwm" {
		t.Errorf("linux.resources %+v: want runc's one deny-all device rule", r)
	}
	if m := s.Mounts[len(s.Mounts)-1]; m.Type != "cgroup" || m.Destination != "/sys/fs/cgroup" {
		t.Errorf("last mount %+v: want runc's read-only cgroup mount", m)
	}
	if c := s.Process.Capabilities; len(c.Ambient) > 0 && len(c.Inheritable) == 0 {
		t.Errorf("ambient %q without an inheritable set cannot be raised", c.Ambient)
	}
	if len(s.Linux.MaskedPaths) < 10 || len(s.Linux.ReadonlyPaths) != 5 {
		t.Errorf("masked %q, read-only %q: want runc's lists", s.Linux.MaskedPaths, s.Linux.ReadonlyPaths)
	}
	// Each call is a fresh spec: editing one list must not change another.
	s.Process.Capabilities.Bounding[0] = "CAP_SYS_ADMIN"
	s.Mounts[3].Options[0] = "suid"
	if s.Process.Capabilities.Effective[0] != "CAP_AUDIT_WRITE" || s.Mounts[4].Options[0] != "nosuid" {
		t.Error("Example() shares slices between fields")
	}
	if Example().Process.Capabilities.Bounding[0] != "CAP_AUDIT_WRITE" {
		t.Error("Example() shares slices between calls")
	}
}

func TestMountOptions(t *testing.T) {
	for _, tc := range []struct {
		typ     string
		options []string
		want    configs.Mount // Source and Destination are filled in below
	}{
		{"tmpfs", nil, configs.Mount{Device: "tmpfs"}},
		{"tmpfs", []string{"ro", "nosuid", "nodev", "noexec", "sync", "dirsync", "mand", "noatime", "nodiratime", "relatime", "strictatime", "nosymfollow"},
			configs.Mount{Device: "tmpfs", Flags: unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC |
				unix.MS_SYNCHRONOUS | unix.MS_DIRSYNC | unix.MS_MANDLOCK | unix.MS_NOATIME | unix.MS_NODIRATIME |
				unix.MS_RELATIME | unix.MS_STRICTATIME | unix.MS_NOSYMFOLLOW}},
		{"tmpfs", []string{"rw", "suid", "dev", "exec", "async", "nomand", "atime", "diratime", "norelatime", "nostrictatime", "symfollow"},
			configs.Mount{Device: "tmpfs", ClearedFlags: unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC |
				unix.MS_SYNCHRONOUS | unix.MS_MANDLOCK | unix.MS_NOATIME | unix.MS_NODIRATIME |
				unix.MS_RELATIME | unix.MS_STRICTATIME | unix.MS_NOSYMFOLLOW}},
		// The last word wins.
		{"tmpfs", []string{"ro", "rw"}, configs.Mount{Device: "tmpfs", ClearedFlags: unix.MS_RDONLY}},
		{"tmpfs", []string{"rw", "ro"}, configs.Mount{Device: "tmpfs", Flags: unix.MS_RDONLY}},
		{"tmpfs", []string{"defaults", "remount", "ro"}, configs.Mount{Device: "tmpfs", Flags: unix.MS_REMOUNT | unix.MS_RDONLY}},
		// Unknown options are the filesystem's, in order.
		{"tmpfs", []string{"size=1m", "nosuid", "mode=1777", "uid=5"},
			configs.Mount{Device: "tmpfs", Flags: unix.MS_NOSUID, Data: "size=1m,mode=1777,uid=5"}},
		{"tmpfs", []string{"shared", "rslave", "private", "rprivate", "unbindable", "runbindable", "slave", "rshared"},
			configs.Mount{Device: "tmpfs", PropagationFlags: []int{
				unix.MS_SHARED, unix.MS_SLAVE | unix.MS_REC, unix.MS_PRIVATE, unix.MS_PRIVATE | unix.MS_REC,
				unix.MS_UNBINDABLE, unix.MS_UNBINDABLE | unix.MS_REC, unix.MS_SLAVE, unix.MS_SHARED | unix.MS_REC}}},
		// Bind mounts: the option or the type; the type becomes "bind".
		{"none", []string{"bind"}, configs.Mount{Device: "bind", Flags: unix.MS_BIND}},
		{"", []string{"rbind", "ro", "rprivate"}, configs.Mount{Device: "bind", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY,
			PropagationFlags: []int{unix.MS_PRIVATE | unix.MS_REC}}},
		{"bind", nil, configs.Mount{Device: "bind", Flags: unix.MS_BIND}},
		{"bind", []string{"rbind", "nosuid"}, configs.Mount{Device: "bind", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_NOSUID}},
	} {
		s := withSpec(func(s *specs.Spec) {
			s.Mounts = []specs.Mount{{Destination: "/mnt/x/", Type: tc.typ, Source: "/src", Options: tc.options}}
		})
		c := convert(t, s)
		want := tc.want
		want.Source, want.Destination = "/src", "/mnt/x"
		if got := c.Mounts[0]; !reflect.DeepEqual(*got, want) {
			t.Errorf("type %q options %q:\n got %+v\nwant %+v", tc.typ, tc.options, *got, want)
		}
	}
}

func TestBindMountSource(t *testing.T) {
	for source, want := range map[string]string{
		"data":         bundle + "/data",
		"./a/../b":     bundle + "/b",
		"/var/lib/x/":  "/var/lib/x",
		"/etc//hosts/": "/etc/hosts",
	} {
		c := convert(t, withSpec(func(s *specs.Spec) {
			s.Mounts = []specs.Mount{{Destination: "/x", Source: source, Options: []string{"rbind"}}}
		}))
		if got := c.Mounts[0].Source; got != want {
			t.Errorf("bind source %q = %q, want %q", source, got, want)
		}
	}
	// Not a bind mount: the source is the filesystem's business.
	c := convert(t, withSpec(func(s *specs.Spec) {
		s.Mounts = []specs.Mount{{Destination: "/x", Type: "tmpfs", Source: "tmpfs"}}
	}))
	if c.Mounts[0].Source != "tmpfs" {
		t.Errorf("tmpfs source = %q, want tmpfs", c.Mounts[0].Source)
	}
}

func TestRootPath(t *testing.T) {
	for path, want := range map[string]string{
		"rootfs":         bundle + "/rootfs",
		"../other/root/": "/run/bundles/other/root",
		"/srv/root":      "/srv/root",
	} {
		c := convert(t, withSpec(func(s *specs.Spec) { s.Root.Path = path }))
		if c.Rootfs != want {
			t.Errorf("root.path %q: rootfs %q, want %q", path, c.Rootfs, want)
		}
	}
	c := convert(t, withSpec(func(s *specs.Spec) { s.Root.Readonly = false }))
	if c.Readonlyfs {
		t.Error("root.readonly false gave a read-only rootfs")
	}
}

func TestDevicesMerge(t *testing.T) {
	mode := os.FileMode(0o020620) // S_IFCHR | 0620, as some tools write it
	uid, gid := uint32(1000), uint32(5)
	c := convert(t, withSpec(func(s *specs.Spec) {
		s.Linux.Devices = []specs.LinuxDevice{
			{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 229},
			{Path: "/dev/tty", Type: "u", Major: 5, Minor: 0, FileMode: &mode, UID: &uid, GID: &gid},
			{Path: "/dev/sda", Type: "b", Major: 8, Minor: 0},
			{Path: "/dev/null/", Type: "c", Major: 1, Minor: 3},
			{Path: "/dev/pipe", Type: "p", Major: 7, Minor: 7},
		}
	}))
	var want []*configs.Device
	for _, d := range defaultDevices() {
		if d.Path != "/dev/tty" && d.Path != "/dev/null" {
			want = append(want, d)
		}
	}
	want = append(want,
		&configs.Device{Type: 'c', Path: "/dev/fuse", Major: 10, Minor: 229, FileMode: 0o666},
		&configs.Device{Type: 'c', Path: "/dev/tty", Major: 5, Minor: 0, FileMode: 0o620, UID: 1000, GID: 5},
		&configs.Device{Type: 'b', Path: "/dev/sda", Major: 8, Minor: 0, FileMode: 0o666},
		&configs.Device{Type: 'c', Path: "/dev/null", Major: 1, Minor: 3, FileMode: 0o666},
		&configs.Device{Type: 'p', Path: "/dev/pipe", FileMode: 0o666},
	)
	if !reflect.DeepEqual(c.Devices, want) {
		t.Errorf("devices:\n got %s\nwant %s", dump(c.Devices), dump(want))
	}
}

func TestDefaultDevices(t *testing.T) {
	want := map[string][2]int64{
		"/dev/null": {1, 3}, "/dev/zero": {1, 5}, "/dev/full": {1, 7},
		"/dev/random": {1, 8}, "/dev/urandom": {1, 9}, "/dev/tty": {5, 0},
	}
	got := defaultDevices()
	if len(got) != len(want) {
		t.Fatalf("%d default devices, want %d", len(got), len(want))
	}
	for _, d := range got {
		mm, ok := want[d.Path]
		if !ok || d.Type != 'c' || d.Major != mm[0] || d.Minor != mm[1] || d.FileMode != 0o666 || d.UID != 0 || d.GID != 0 {
			t.Errorf("default device %+v, want char %d:%d mode 0666 owned by root", d, mm[0], mm[1])
		}
	}
}

func TestNamespacesAndMappings(t *testing.T) {
	c := convert(t, withSpec(func(s *specs.Spec) {
		s.Linux.Namespaces = []specs.LinuxNamespace{
			{Type: "user"}, {Type: "mount"}, {Type: "network", Path: "/var/run/netns/n1"},
			{Type: "uts", Path: "/proc/1/ns/uts"}, {Type: "cgroup"}, {Type: "time"}, {Type: "ipc"}, {Type: "pid"},
		}
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
		s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 1}, {ContainerID: 1, HostID: 1, Size: 4294967295}}
	}))
	wantNS := []configs.Namespace{
		{Type: configs.NEWUSER}, {Type: configs.NEWNS}, {Type: configs.NEWNET, Path: "/var/run/netns/n1"},
		{Type: configs.NEWUTS, Path: "/proc/1/ns/uts"}, {Type: configs.NEWCGROUP}, {Type: configs.NEWTIME},
		{Type: configs.NEWIPC}, {Type: configs.NEWPID},
	}
	if !reflect.DeepEqual(c.Namespaces, wantNS) {
		t.Errorf("namespaces %+v, want %+v", c.Namespaces, wantNS)
	}
	if want := []configs.IDMap{{ContainerID: 0, HostID: 100000, Size: 65536}}; !reflect.DeepEqual(c.UIDMappings, want) {
		t.Errorf("uid mappings %+v, want %+v", c.UIDMappings, want)
	}
	if len(c.GIDMappings) != 2 || c.GIDMappings[1].Size != 4294967295 {
		t.Errorf("gid mappings %+v", c.GIDMappings)
	}
	// A joined user namespace brings its own mappings.
	convert(t, withSpec(func(s *specs.Spec) {
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "user", Path: "/proc/7/ns/user"})
	}))
}

func TestRootfsPropagation(t *testing.T) {
	for p, want := range map[string]int{
		"":            0,
		"shared":      unix.MS_SHARED,
		"rshared":     unix.MS_SHARED | unix.MS_REC,
		"slave":       unix.MS_SLAVE,
		"rslave":      unix.MS_SLAVE | unix.MS_REC,
		"private":     unix.MS_PRIVATE,
		"rprivate":    unix.MS_PRIVATE | unix.MS_REC,
		"unbindable":  unix.MS_UNBINDABLE,
		"runbindable": unix.MS_UNBINDABLE | unix.MS_REC,
	} {
		c := convert(t, withSpec(func(s *specs.Spec) { s.Linux.RootfsPropagation = p }))
		if c.RootPropagation != want {
			t.Errorf("rootfsPropagation %q = %#x, want %#x", p, c.RootPropagation, want)
		}
	}
}

func TestProcess(t *testing.T) {
	umask, oom := uint32(0o027), -500
	c := convert(t, withSpec(func(s *specs.Spec) {
		p := s.Process
		p.Args = []string{"/bin/app", "--flag", ""}
		p.Env = []string{"A=1", "EMPTY=", "B=x=y"}
		p.Cwd = "/srv/app/"
		p.User = specs.User{UID: 1000, GID: 1001, AdditionalGids: []uint32{5, 6}, Umask: &umask}
		p.Capabilities = &specs.LinuxCapabilities{
			Bounding:    []string{"CAP_CHOWN", "CAP_CHECKPOINT_RESTORE"},
			Effective:   []string{"CAP_CHOWN"},
			Inheritable: []string{"CAP_SYS_RESOURCE"}, // this machine's bounding set lacks it: no matter here
			Permitted:   []string{"CAP_CHOWN", "CAP_BPF"},
			Ambient:     []string{"CAP_BPF"},
		}
		p.NoNewPrivileges = false
		p.Terminal = false
		p.OOMScoreAdj = &oom
		p.Rlimits = []specs.POSIXRlimit{
			{Type: "RLIMIT_CORE", Hard: 0, Soft: 0},
			{Type: "RLIMIT_NOFILE", Hard: 4096, Soft: 1024},
			{Type: "RLIMIT_STACK", Hard: ^uint64(0), Soft: 8 << 20},
		}
	}))
	want := &configs.Process{
		Args: []string{"/bin/app", "--flag", ""},
		Env:  []string{"A=1", "EMPTY=", "B=x=y"},
		Cwd:  "/srv/app",
		User: configs.User{UID: 1000, GID: 1001, AdditionalGids: []uint32{5, 6}, Umask: &umask},
		Capabilities: &configs.Capabilities{
			Bounding:    []string{"CAP_CHOWN", "CAP_CHECKPOINT_RESTORE"},
			Effective:   []string{"CAP_CHOWN"},
			Inheritable: []string{"CAP_SYS_RESOURCE"},
			Permitted:   []string{"CAP_CHOWN", "CAP_BPF"},
			Ambient:     []string{"CAP_BPF"},
		},
		OomScoreAdj: &oom,
		Rlimits: []configs.Rlimit{
			{Type: unix.RLIMIT_CORE},
			{Type: unix.RLIMIT_NOFILE, Hard: 4096, Soft: 1024},
			{Type: unix.RLIMIT_STACK, Hard: ^uint64(0), Soft: 8 << 20},
		},
	}
	if !reflect.DeepEqual(c.Process, want) {
		t.Errorf("process\n got %s\nwant %s", dump(c.Process), dump(want))
	}
	if c.Process.User.Umask == &umask || c.Process.OomScoreAdj == &oom {
		t.Error("the config shares pointers with the spec")
	}

	c = convert(t, withSpec(func(s *specs.Spec) { s.Process.Capabilities = nil }))
	if c.Process.Capabilities != nil {
		t.Errorf("no capabilities in the spec gave %+v, want nil (drop all)", c.Process.Capabilities)
	}
}

func TestRlimitNames(t *testing.T) {
	for name, want := range map[string]int{
		"RLIMIT_AS": unix.RLIMIT_AS, "RLIMIT_CORE": unix.RLIMIT_CORE, "RLIMIT_CPU": unix.RLIMIT_CPU,
		"RLIMIT_DATA": unix.RLIMIT_DATA, "RLIMIT_FSIZE": unix.RLIMIT_FSIZE, "RLIMIT_LOCKS": unix.RLIMIT_LOCKS,
		"RLIMIT_MEMLOCK": unix.RLIMIT_MEMLOCK, "RLIMIT_MSGQUEUE": unix.RLIMIT_MSGQUEUE, "RLIMIT_NICE": unix.RLIMIT_NICE,
		"RLIMIT_NOFILE": unix.RLIMIT_NOFILE, "RLIMIT_NPROC": unix.RLIMIT_NPROC, "RLIMIT_RSS": unix.RLIMIT_RSS,
		"RLIMIT_RTPRIO": unix.RLIMIT_RTPRIO, "RLIMIT_RTTIME": unix.RLIMIT_RTTIME,
		"RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING, "RLIMIT_STACK": unix.RLIMIT_STACK,
	} {
		got, err := convertRlimits([]specs.POSIXRlimit{{Type: name, Hard: 2, Soft: 1}})
		if err != nil || len(got) != 1 || got[0].Type != want {
			t.Errorf("%s = %+v, %v; want type %d", name, got, err, want)
		}
	}
}

func TestOtherFields(t *testing.T) {
	c := convert(t, withSpec(func(s *specs.Spec) {
		s.Domainname = "example.org"
		s.Annotations = map[string]string{"org.example/a": "1"}
		s.Linux.Sysctl = map[string]string{
			"net.ipv4.ip_forward": "1", "kernel.shm_rmid_forced": "1", "fs.mqueue.msg_max": "20",
			"kernel.domainname": "x", "net/ipv4/ping_group_range": "0 0",
		}
	}))
	if c.Domainname != "example.org" || c.Annotations["org.example/a"] != "1" || len(c.Sysctl) != 5 {
		t.Errorf("domainname %q, annotations %v, sysctl %v", c.Domainname, c.Annotations, c.Sysctl)
	}
	c, _, err := Convert(Example(), Options{Bundle: bundle, NoPivotRoot: true, NoNewKeyring: true})
	if err != nil || !c.NoPivotRoot || !c.NoNewKeyring {
		t.Errorf("options not carried over: %+v, %v", c, err)
	}
}

func TestWarnings(t *testing.T) {
	limit := int64(1 << 20)
	for _, tc := range []struct {
		name string
		edit func(s *specs.Spec)
		want []string
	}{
		{"runc's deny-all device rule", func(s *specs.Spec) {
			s.Linux.Resources = &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}}}
		}, nil},
		{"empty resources", func(s *specs.Spec) { s.Linux.Resources = &specs.LinuxResources{} }, nil},
		{"limits", func(s *specs.Spec) {
			s.Linux.Resources = &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}, {Allow: true, Type: "c", Access: "rwm"}},
				Memory:  &specs.LinuxMemory{Limit: &limit},
				Pids:    &specs.LinuxPids{Limit: &limit},
			}
		}, nil},
		{"cgroups path", func(s *specs.Spec) { s.Linux.CgroupsPath = "/husk/c1" }, nil},
		{"kernel memory", func(s *specs.Spec) {
			s.Linux.Resources = &specs.LinuxResources{Memory: &specs.LinuxMemory{Kernel: &limit}}
		}, []string{"linux.resources.memory.kernel: ignored: the kernel no longer limits kernel memory separately"}},
		{"process extras", func(s *specs.Spec) {
			s.Process.Scheduler = &specs.Scheduler{Policy: "SCHED_OTHER"}
			s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_BE}
		}, nil},
		{"net devices", func(s *specs.Spec) { s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth1": {}} }, nil},
		{"other platforms", func(s *specs.Spec) { s.Windows = &specs.Windows{} },
			[]string{"windows: ignored on Linux"}},
		{"data on a bind mount", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/x", Source: "/y", Options: []string{"bind", "size=1m"}})
		}, []string{`mounts[7].options: "size=1m" ignored: the kernel takes no data for a bind mount`}},
		{"relative destination", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "data", Source: "/y", Options: []string{"bind"}})
		}, []string{`mounts[7].destination: "data" is relative, taken as "/data"`}},
		{"tmpcopyup on a bind", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/x", Source: "/y", Options: []string{"bind", "tmpcopyup"}})
		}, []string{`mounts[7].options[1]: tmpcopyup ignored: it applies to a tmpfs, not ""`}},
		{"no mount namespace", func(s *specs.Spec) {
			s.Linux.Namespaces = s.Linux.Namespaces[:4]
			s.Linux.MaskedPaths, s.Linux.ReadonlyPaths = nil, nil
			s.Root.Readonly = true
		}, []string{"mounts: ignored: the container shares the host's mount namespace",
			"root.readonly: ignored: the container shares the host's mount namespace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warnings, err := Convert(withSpec(tc.edit), Options{Bundle: bundle})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(warnings, tc.want) {
				t.Errorf("warnings\n got %q\nwant %q", warnings, tc.want)
			}
		})
	}
}

func TestTimensOffsets(t *testing.T) {
	for _, tc := range []struct {
		offsets map[string]specs.LinuxTimeOffset
		want    string
	}{
		{nil, ""},
		{map[string]specs.LinuxTimeOffset{"boottime": {Secs: -5}}, "boottime -5 0\n"},
		{map[string]specs.LinuxTimeOffset{"boottime": {Secs: 86400, Nanosecs: 7}, "monotonic": {Secs: 1, Nanosecs: 999999999}},
			"monotonic 1 999999999\nboottime 86400 7\n"},
	} {
		s := withSpec(func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "time"})
			s.Linux.TimeOffsets = tc.offsets
		})
		got, err := TimensOffsets(s)
		if err != nil || got != tc.want {
			t.Errorf("TimensOffsets(%v) = %q, %v; want %q", tc.offsets, got, err, tc.want)
		}
		convert(t, s)
	}
	if got, err := TimensOffsets(&specs.Spec{}); got != "" || err != nil {
		t.Errorf("no linux section: %q, %v", got, err)
	}
}

func TestConvertDoesNotAlias(t *testing.T) {
	s := Example()
	c := convert(t, s)
	s.Process.Args[0] = "changed"
	s.Process.Capabilities.Bounding[0] = "changed"
	s.Linux.MaskedPaths[0] = "changed"
	if c.Process.Args[0] == "changed" || c.Process.Capabilities.Bounding[0] == "changed" || c.MaskPaths[0] == "changed" {
		t.Error("the config shares slices with the spec")
	}
}

// Unknown capability names are ignored with runc's warning, once each;
// the known ones stay in their sets.
func TestUnknownCapabilitiesWarn(t *testing.T) {
	s := withSpec(func(s *specs.Spec) {
		s.Process.Capabilities = &specs.LinuxCapabilities{
			Bounding:  []string{"CAP_KILL", "CAP_FOO"},
			Effective: []string{"CAP_FOO", "CAP_KILL", "CAP_BAR"},
			Permitted: []string{"CAP_KILL"},
		}
	})
	c, warnings, err := Convert(s, Options{Bundle: bundle})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"process.capabilities: ignoring unknown or unavailable capabilities: [CAP_FOO CAP_BAR]"}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	got := c.Process.Capabilities
	if !slices.Equal(got.Bounding, []string{"CAP_KILL"}) || !slices.Equal(got.Effective, []string{"CAP_KILL"}) ||
		got.Inheritable != nil || got.Ambient != nil {
		t.Errorf("capabilities: %s", dump(got))
	}
}

func TestOCIVersionSemVer(t *testing.T) {
	for _, v := range []string{"1.0.0", "1.0.2-dev", "1.3.0", "1.2.0-rc.1+build.5", "1.99.0"} {
		if _, _, err := Convert(withSpec(func(s *specs.Spec) { s.Version = v }), Options{Bundle: bundle}); err != nil {
			t.Errorf("ociVersion %q: %v", v, err)
		}
	}
	for _, v := range []string{"banana", "1", "1.0", "01.0.0", "1.0.0-", "v1.0.0", "1.0.0 ", "0.1.0", "2.0.0", "10.0.0"} {
		if _, _, err := Convert(withSpec(func(s *specs.Spec) { s.Version = v }), Options{Bundle: bundle}); err == nil ||
			!strings.HasPrefix(err.Error(), "ociVersion: ") {
			t.Errorf("ociVersion %q: %v, want an ociVersion error", v, err)
		}
	}
}
