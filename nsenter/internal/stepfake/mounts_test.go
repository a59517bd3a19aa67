package stepfake

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	golaunch "github.com/husk-runtime/husk/libcontainer/launch"
	"golang.org/x/sys/unix"
)

// The image's tree the plans below run on: /escape leads out of the
// root, /tolink into /proc.
const imageTree = "d /proc\nd /dev\nd /dev/shm\nd /sys\nd /srv\nf /srv/file\nd /srv/sub\nf /srv/sub/x\nl /srv/link ../etc\nl /escape /../../tmp\nl /toproc /proc/sys\nF /host/file\nD /host/dir\nP /host/proc\n"

func step(i uint32, kind bootstrap.MountKind, dest bootstrap.MountDest, destination, source, fstype, data string, flags uint32) bootstrap.MountStep {
	shown := source
	if shown == "" {
		shown = fstype
	}
	head := fmt.Sprintf("mounts[%d]: error mounting %q to rootfs at %q", i, shown, destination)
	return bootstrap.MountStep{Index: i, Kind: kind, Dest: dest, Fd: -1, Destination: destination, Source: source, FSType: fstype, Data: data, Flags: flags, Head: head}
}

// defaultPlan is the runc spec's mounts but cgroup, and binds.
func defaultPlan() *bootstrap.MountPlan {
	nse := uint32(unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV)
	fs, bind := bootstrap.MountFS, bootstrap.MountBind
	p := &bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{
		step(0, fs, bootstrap.DestRealDir, "/proc", "proc", "proc", "", nse),
		step(1, fs, bootstrap.DestCovered, "/dev", "tmpfs", "tmpfs", "mode=755,size=65536k", unix.MS_NOSUID|unix.MS_STRICTATIME),
		step(2, fs, bootstrap.DestDir, "/dev/pts", "devpts", "devpts", "newinstance,ptmxmode=0666,mode=0620,gid=5", unix.MS_NOSUID|unix.MS_NOEXEC),
		step(3, fs, bootstrap.DestCovered, "/dev/shm", "shm", "tmpfs", "size=65536k", nse),
		step(4, fs, bootstrap.DestRealDir, "/sys", "sysfs", "sysfs", "", nse|unix.MS_RDONLY),
		step(5, bind, bootstrap.DestBySource, "/escape/file", "/host/file", "", "", unix.MS_BIND|unix.MS_RDONLY),
		step(6, bind, bootstrap.DestBySource, "/data", "/host/dir", "", "", unix.MS_BIND|unix.MS_REC),
		step(7, bind, bootstrap.DestBySource, "/srv/again", "/srv/file", "", "", unix.MS_BIND),
		step(8, fs, bootstrap.DestCovered, "/srv", "tmpfs", "tmpfs", "", unix.MS_RDONLY),
	}}
	p.Mounts[8].Opts = bootstrap.MountCopyUp
	p.Mounts[3].Opts = bootstrap.MountTmpfsMode
	p.Mounts[6].Propagation = []uint32{unix.MS_PRIVATE | unix.MS_REC}
	p.Mounts[6].RecSet = unix.MOUNT_ATTR_NOSUID
	p.Mounts[7].Opts = bootstrap.MountInRoot
	return p
}

// callsInOrder fails t unless want are among calls, in this order.
func callsInOrder(t *testing.T, calls, want []string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := slices.Index(calls[at:], w)
		if i < 0 {
			t.Fatalf("no %q after call %d in:\n%s", w, at, strings.Join(calls, "\n"))
		}
		at += i + 1
	}
}

func TestMountsDefault(t *testing.T) {
	r, err := Mounts(defaultPlan(), imageTree, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Err != nil {
		t.Fatalf("%v\n%s", r.Err, strings.Join(r.Calls, "\n"))
	}
	if r.OpenFds != 0 {
		t.Errorf("%d fds left open", r.OpenFds)
	}
	callsInOrder(t, r.Calls, []string{
		"open(/r)",
		// proc: on an ordinary directory, no symlink followed.
		"openat(/, proc, dir)", "fsopen(proc)", "fsconfig(proc, source=proc)", "fsconfig(proc, create)",
		"fsmount(proc, 0xe)", "move_mount(proc -> /proc)",
		// /dev: its own mode, strictatime.
		"fsopen(tmpfs)", "fsconfig(tmpfs, mode=755)", "fsconfig(tmpfs, size=65536k)", "fsmount(tmpfs, 0x22)",
		"move_mount(tmpfs -> /dev)",
		"openat(/dev, pts, dir)", "fsconfig(devpts, newinstance)", "fsconfig(devpts, gid=5)", "move_mount(devpts -> /dev/pts)",
		// /dev/shm: no mode= given, the covered directory's (the fake's 1777).
		"openat(/dev, shm)", "fsconfig(tmpfs, size=65536k)", "fsconfig(tmpfs, mode=1777)", "move_mount(tmpfs -> /dev/shm)",
		// sysfs read-only: the superblock's flag and the mount's.
		"fsconfig(sysfs, ro)", "fsmount(sysfs, 0xf)", "move_mount(sysfs -> /sys)",
		// A bind through a symlink leading out of the root lands inside it.
		"readlinkat(/escape)", "open(/host/file)", "mkdirat(/tmp)", "mknodat(/tmp/file)",
		"open_tree(/host/file)", "move_mount(tree:/host/file -> /tmp/file)",
		"mount_setattr(/tmp/file, set 0x1, clr 0x20000e, prop 0x0)",
		// rbind: recursive clone, then the recursive attributes, then the propagation.
		"open(/host/dir)", "mkdirat(/data)", "open_tree(/host/dir, recursive)", "move_mount(tree:/host/dir -> /data)",
		"mount_setattr(/data, recursive, set 0x2, clr 0x0, prop 0x0)",
		"mount_setattr(/data, recursive, set 0x0, clr 0x0, prop 0x40000)",
		// A source inside the root: resolved in it.
		"openat2(/srv/file, follow)", "mknodat(/srv/again)", "move_mount(tree:/srv/file -> /srv/again)",
		// tmpcopyup: mounted writable, filled from what it covers, made read-only.
		"fsopen(tmpfs)", "fsmount(tmpfs, 0x0)", "move_mount(tmpfs -> /srv)", "openat(@/srv, ., dir)",
		"openat(/srv, ., dir)", "getdents64(/srv)",
		"fstatat(/srv/file)", "openat(/srv, file)", "openat(@/srv, file, create)", "fchownat(@/srv/file, 7, 7)", "fchmodat(@/srv/file, 0640)", "utimensat(@/srv/file)",
		"fstatat(/srv/sub)", "mkdirat(@/srv/sub)", "openat(/srv, sub, dir)", "getdents64(/srv/sub)", "fstatat(/srv/sub/x)", "openat(@/srv/sub, x, create)",
		"fchmodat(@/srv/sub, 0755)",
		"fstatat(/srv/link)", "readlinkat(/srv/link)", "symlinkat(@/srv/link -> ../etc)", "fchownat(@/srv/link, 7, 7)", "utimensat(@/srv/link)",
		"fstat(/srv)", "fchown(@/srv, 0)", "fchmod(@/srv, 1777)",
		"mount_setattr(@/srv, set 0x1, clr 0x0, prop 0x0)",
	})
}

func countPrefix(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

var errLine = regexp.MustCompile(`^mounts\[(\d)\]: error mounting "[^"]+" to rootfs at "[^"]+": .*input/output error`)

// Each call that fails stops the mounts with an error naming the mount,
// and leaves no fd open; but a tmpfs's look at what it covers, which it
// goes on without (as Go init's mountTmpfs).
func TestMountsEachFailure(t *testing.T) {
	ok, err := Mounts(defaultPlan(), imageTree, -1, 0)
	if err != nil || ok.Err != nil {
		t.Fatal(err, ok.Err)
	}
	for i, call := range ok.Calls {
		r, err := Mounts(defaultPlan(), imageTree, i, syscall.EIO)
		if err != nil {
			t.Fatal(err)
		}
		if r.OpenFds != 0 {
			t.Errorf("call %d %s fails: %d fds left open", i, call, r.OpenFds)
		}
		if r.Err == nil {
			// Go init's mountTmpfs goes on too: the covered path's
			// lookup fails, the destination is made; every mount made.
			next := slices.Index(ok.Calls[i:], "fsopen(tmpfs)")
			if next < 0 || slices.ContainsFunc(ok.Calls[i:i+next], func(c string) bool { return strings.HasPrefix(c, "move_mount") }) ||
				countPrefix(r.Calls, "move_mount") != countPrefix(ok.Calls, "move_mount") {
				t.Errorf("call %d %s fails: no error", i, call)
			}
			continue
		}
		if i == 0 {
			if !strings.HasPrefix(r.Err.Error(), "root.path /r: open: input/output error") {
				t.Errorf("open of the root fails: %v", r.Err)
			}
			continue
		}
		if !errLine.MatchString(r.Err.Error()) {
			t.Errorf("call %d %s fails: %v", i, call, r.Err)
		}
	}
}

func TestMountsRefused(t *testing.T) {
	fs, bind := bootstrap.MountFS, bootstrap.MountBind
	for _, tc := range []struct {
		name string
		step bootstrap.MountStep
		want string
	}{
		{"a tmpfs on /proc", step(0, fs, bootstrap.DestCovered, "/proc", "tmpfs", "tmpfs", "", 0),
			`mounts[0]: error mounting "tmpfs" to rootfs at "/proc": "/proc" cannot be mounted because it is not of type proc`},
		{"a bind through a symlink into /proc", step(1, bind, bootstrap.DestBySource, "/toproc/x", "/host/dir", "", "", unix.MS_BIND),
			`mounts[1]: error mounting "/host/dir" to rootfs at "/toproc/x": "/proc/sys/x" cannot be mounted because it is inside /proc`},
		{"a bind on /proc of a directory", step(2, bind, bootstrap.DestBySource, "/proc", "/host/dir", "", "", unix.MS_BIND),
			`"/proc" cannot be mounted because it is not of type proc (the bind's source is not a procfs)`},
		{"proc through a symlink", step(3, fs, bootstrap.DestRealDir, "/escape/proc", "proc", "proc", "", 0),
			`mounts[3]: error mounting "proc" to rootfs at "/escape/proc": must be mounted on ordinary directory, /escape is not one: openat: not a directory`},
		{"a missing host source", step(4, bind, bootstrap.DestBySource, "/x", "/host/none", "", "", unix.MS_BIND),
			`mounts[4]: error mounting "/host/none" to rootfs at "/x": open /host/none: no such file or directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Mounts(&bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{tc.step}}, imageTree, -1, 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.Err == nil || !strings.Contains(r.Err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", r.Err, tc.want)
			}
			if r.OpenFds != 0 {
				t.Errorf("%d fds left open", r.OpenFds)
			}
			for _, c := range r.Calls {
				if strings.HasPrefix(c, "move_mount") {
					t.Errorf("mounted: %s", c)
				}
			}
		})
	}
	// A bind on /proc of a procfs is allowed.
	r, err := Mounts(&bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{step(0, bind, bootstrap.DestBySource, "/proc", "/host/proc", "", "", unix.MS_BIND)}}, imageTree, -1, 0)
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
}

// An EPERM from the filesystem binds the host's directory instead, where
// Go init does (sysfs without a network namespace of its own).
func TestMountsFallback(t *testing.T) {
	s := step(0, bootstrap.MountFS, bootstrap.DestRealDir, "/sys", "sysfs", "sysfs", "", unix.MS_RDONLY)
	s.Fallback = "/host/dir"
	p := &bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{s}}
	ok, _ := Mounts(p, imageTree, -1, 0)
	create := slices.Index(ok.Calls, "fsconfig(sysfs, create)")
	r, err := Mounts(p, imageTree, create, syscall.EPERM)
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	callsInOrder(t, r.Calls, []string{"fsconfig(sysfs, create)", "open(/host/dir)", "open_tree(/host/dir, recursive)",
		"move_mount(tree:/host/dir -> /sys)", "mount_setattr(/sys, set 0x1, clr 0x20000e, prop 0x0)"})
	if r.OpenFds != 0 {
		t.Errorf("%d fds left open", r.OpenFds)
	}
}

// The C split and /proc check are the Go ones.
func TestMountsDecisionsMatchGo(t *testing.T) {
	for _, data := range []string{"", "a", "a,b=c", ",,x,,", `context="a,b",y`, `k="v"`, `k=""`, `"a,b"`, "mode=1777,size=1m"} {
		got, ok := SplitMountData(data)
		if want := golaunch.SplitMountData(data); !ok || !slices.Equal(got, want) {
			t.Errorf("split %q: C %q, Go %q", data, got, want)
		}
	}
	for _, dest := range []string{"/", "/proc", "/procx", "/proc/sys", "/proc/meminfo", "/proc/net/dev", "/proc/sys/kernel/ns_last_pid", "/proc/1/fd", "/pro"} {
		for _, fstype := range []string{"proc", "tmpfs", ""} {
			for _, b := range []bool{false, true} {
				cerr, goerr := ProcCheck(dest, fstype, b), configs.CheckProcMount(dest, fstype, b)
				if (cerr == nil) != (goerr == nil) || (cerr != nil && cerr.Error() != goerr.Error()) {
					t.Errorf("%s %s %v: C %v, Go %v", dest, fstype, b, cerr, goerr)
				}
			}
		}
	}
}

// mountRec is one record of a mount plan as the parser reads it.
func mountRec(typ uint32, payload []byte) []byte {
	b := binary.NativeEndian.AppendUint32(nil, typ)
	b = binary.NativeEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	return append(b, make([]byte, (8-len(payload)%8)%8)...)
}

func TestMountsMalformed(t *testing.T) {
	good, err := defaultPlan().Encode()
	if err != nil {
		t.Fatal(err)
	}
	root := mountRec(bootstrap.RecMountsRoot, []byte("/r\x00"))
	head := func(mut func(h []uint32)) []byte {
		h := make([]uint32, 16)
		h[0], h[1], h[2] = 9, uint32(bootstrap.MountFS), uint32(bootstrap.DestDir)
		h[14] = ^uint32(0) // fd -1
		if mut != nil {
			mut(h)
		}
		b := make([]byte, 0, 64)
		for _, v := range h {
			b = binary.NativeEndian.AppendUint32(b, v)
		}
		return b
	}
	strs := []byte("/d\x00src\x00tmpfs\x00\x00\x00\x00h\x00")
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", good[:len(good)-3], "runs past the end"},
		{"no root", mountRec(bootstrap.RecMountsMount, append(head(nil), strs...)), "want ROOT"},
		{"a bad kind", append(root, mountRec(2, append(head(func(h []uint32) { h[1] = 7 }), strs...))...), "mounts[9]: kind 7"},
		{"a bad destination kind", append(root, mountRec(2, append(head(func(h []uint32) { h[2] = 0 }), strs...))...), "mounts[9]: destination kind 0"},
		{"a bad propagation", append(root, mountRec(2, append(head(func(h []uint32) { h[10] = 3 }), strs...))...), "mounts[9]: propagation 0x3"},
		{"a propagation after the end", append(root, mountRec(2, append(head(func(h []uint32) { h[11] = unix.MS_SLAVE }), strs...))...), "mounts[9]: propagation 0x80000"},
		{"an fd for a filesystem", append(root, mountRec(2, append(head(func(h []uint32) { h[14] = 3 }), strs...))...), "mounts[9]: fd 3 for kind 1"},
		{"a string not NUL-terminated", append(root, mountRec(2, append(head(nil), "/d\x00src\x00tmpfs\x00\x00\x00\x00x"...))...), "mounts[9]: error head: not NUL-terminated"},
		{"a relative destination", append(root, mountRec(2, append(head(nil), "d\x00src\x00tmpfs\x00\x00\x00\x00h\x00"...))...), `mounts[9]: destination "d" is not absolute`},
		{"bytes after the strings", append(root, mountRec(2, append(head(nil), "/d\x00src\x00tmpfs\x00\x00\x00\x00h\x00z"...))...), "mounts[9]: 1 bytes after its strings"},
		{"a long destination", append(root, mountRec(2, append(head(nil), "/"+strings.Repeat("d", 5000)+"\x00src\x00tmpfs\x00\x00\x00\x00h\x00"...))...), "mounts[9]: destination: 5001 bytes, over 4095"},
		{"a short head", append(root, mountRec(2, []byte("abc"))...), "record MOUNT: 3 bytes"},
		{"no error head", append(root, mountRec(2, append(head(nil), "/d\x00src\x00tmpfs\x00\x00\x00\x00\x00"...))...), "mounts[9]: no error head"},
		{"a symlink's name with a slash", append(root, mountRec(2, append(head(func(h []uint32) { h[1] = uint32(bootstrap.MountSymlink) }), "/d\x00t\x00\x00../x\x00\x00\x00h\x00"...))...),
			`mounts[9]: symlink "../x" -> "t": not a name and a target`},
		{"a record of another type", append(root, mountRec(5, nil)...), "record 5 at offset 16, want MOUNT"},
		{"three mount points", append(root, mountRec(bootstrap.RecMountsPrepare, binary.NativeEndian.AppendUint32(binary.NativeEndian.AppendUint32(make([]byte, 0, 16), unix.MS_SLAVE), 3))...), "PREPARE: 8 bytes, want at least 24"},
		{"a device of a socket's mode", append(root, mountRec(bootstrap.RecMountsDevice, append(binary.NativeEndian.AppendUint32(binary.NativeEndian.AppendUint32(nil, 2), unix.S_IFSOCK|0o600), append(make([]byte, 16), "/dev/x\x00"...)...))...), "devices[2]: mode 0140600"},
		{"a device's path ending in /", append(root, mountRec(bootstrap.RecMountsDevice, append(binary.NativeEndian.AppendUint32(binary.NativeEndian.AppendUint32(nil, 2), unix.S_IFCHR|0o600), append(make([]byte, 16), "/dev/\x00"...)...))...), "devices[2]: the path is not one absolute path"},
		{"a bad rootfs propagation", append(root, mountRec(bootstrap.RecMountsPrepare, make([]byte, 24))...), "PREPARE: linux.rootfsPropagation 0x0, then 0x0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MountsRaw(tc.b, imageTree, -1, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	var many []byte
	many = append(many, root...)
	one := mountRec(2, append(head(nil), strs...))
	for i := 0; i <= bootstrap.MountsMaxCount; i++ {
		many = append(many, one...)
	}
	if _, err := MountsRaw(many, imageTree, -1, 0); err == nil || !strings.Contains(err.Error(), "more than 4096 mounts") {
		t.Fatalf("4097 mounts: %v", err)
	}
}

// FuzzParseMounts: no payload makes the parser read out of bounds (run
// under -race or ASan for the strongest check); what parses runs.
func FuzzParseMounts(f *testing.F) {
	good, _ := defaultPlan().Encode()
	f.Add(good)
	f.Add(good[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		_, _ = MountsRaw(b, imageTree, -1, 0)
	})
}

// linux.mountLabel: the data's context= goes to fsconfig without its
// quotes, a refusal names it; mqueue's root gets the label.
func TestMountsLabel(t *testing.T) {
	const l = "system_u:object_r:container_file_t:s0:c1,c2"
	shm := step(0, bootstrap.MountFS, bootstrap.DestCovered, "/dev/shm", "shm", "tmpfs", `size=1m,context="`+l+`"`, 0)
	shm.Opts = bootstrap.MountLabelled
	mq := step(1, bootstrap.MountFS, bootstrap.DestDir, "/dev/mqueue", "mqueue", "mqueue", "", 0)
	mq.Opts, mq.RootLabel = bootstrap.MountLabelled, l
	p := &bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{shm, mq}}
	r, err := Mounts(p, imageTree, -1, 0)
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	callsInOrder(t, r.Calls, []string{"fsconfig(tmpfs, context=" + l + ")", "move_mount(tmpfs -> /dev/shm)",
		"move_mount(mqueue -> /dev/mqueue)", "openat(@/dev/mqueue, ., dir)", "fsetxattr(@/dev/mqueue, security.selinux, " + l + ")"})
	refused := slices.Index(r.Calls, "fsconfig(tmpfs, context="+l+")")
	r, err = Mounts(p, imageTree, refused, syscall.EINVAL)
	want := `mounts[0]: error mounting "shm" to rootfs at "/dev/shm": data "size=1m,context=\"` + l + `\"" (linux.mountLabel): fsconfig context=` + l + `: invalid argument`
	if err != nil || r.Err == nil || r.Err.Error() != want {
		t.Fatalf("error %v (%v), want %s", r.Err, err, want)
	}
	setx := slices.IndexFunc(r.Calls, func(c string) bool { return strings.HasPrefix(c, "fsetxattr") })
	if ok, _ := Mounts(p, imageTree, -1, 0); setx < 0 {
		setx = slices.IndexFunc(ok.Calls, func(c string) bool { return strings.HasPrefix(c, "fsetxattr") })
	}
	r, _ = Mounts(p, imageTree, setx, syscall.EOPNOTSUPP)
	if r.Err == nil || !strings.HasSuffix(r.Err.Error(), `linux.mountLabel "`+l+`": setxattr security.selinux: operation not supported`) {
		t.Fatalf("error %v", r.Err)
	}
}

// A cgroup v1 mount's steps (launch's cgroupSteps): the tmpfs, a
// co-mounted hierarchy and its symlinks, the read-only remount and the
// propagation last; every failure names the mount, and the hierarchy.
func TestMountsCgroupSteps(t *testing.T) {
	const head = `mounts[6]: error mounting "cgroup" to rootfs at "/sys/fs/cgroup"`
	ro := uint32(unix.MS_RDONLY | unix.MS_NOSUID)
	tmpfs := step(6, bootstrap.MountFS, bootstrap.DestDir, "/sys/fs/cgroup", "tmpfs", "tmpfs", "mode=755", unix.MS_NOSUID)
	tmpfs.Head = head + ": tmpfs"
	cpu := step(6, bootstrap.MountFS, bootstrap.DestDir, "/sys/fs/cgroup/cpu,cpuacct", "cgroup", "cgroup", "cpu,cpuacct", ro)
	cpu.Head = head + ": /sys/fs/cgroup/cpu,cpuacct"
	link := func(name string) bootstrap.MountStep {
		return bootstrap.MountStep{Index: 6, Kind: bootstrap.MountSymlink, Dest: bootstrap.DestDir, Fd: -1, Destination: "/sys/fs/cgroup",
			Source: "cpu,cpuacct", Data: name, Head: cpu.Head}
	}
	last := step(6, bootstrap.MountRemount, bootstrap.DestDir, "/sys/fs/cgroup", "cgroup", "", "", ro)
	last.Head, last.Propagation = head, []uint32{unix.MS_SLAVE | unix.MS_REC}
	p := &bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{tmpfs, cpu, link("cpu"), link("cpuacct"), last}}
	ok, err := Mounts(p, imageTree, -1, 0)
	if err != nil || ok.Err != nil {
		t.Fatal(err, ok.Err)
	}
	callsInOrder(t, ok.Calls, []string{"move_mount(tmpfs -> /sys/fs/cgroup)", "fsconfig(cgroup, cpu)", "fsconfig(cgroup, cpuacct)", "fsconfig(cgroup, ro)",
		"move_mount(cgroup -> /sys/fs/cgroup/cpu,cpuacct)", "symlinkat(/sys/fs/cgroup/cpu -> cpu,cpuacct)",
		"symlinkat(/sys/fs/cgroup/cpuacct -> cpu,cpuacct)", "fstatfs(/sys/fs/cgroup)",
		"mount_setattr(/sys/fs/cgroup, set 0x23, clr 0x2000fc, prop 0x0)",
		"mount_setattr(/sys/fs/cgroup, recursive, set 0x0, clr 0x0, prop 0x80000)"})
	if ok.OpenFds != 0 {
		t.Errorf("%d fds left open", ok.OpenFds)
	}
	for i, call := range ok.Calls {
		r, err := Mounts(p, imageTree, i, syscall.EIO)
		if err != nil {
			t.Fatal(err)
		}
		if r.Err == nil || !strings.HasPrefix(r.Err.Error(), "mounts[6]: error mounting \"cgroup\" to rootfs at \"/sys/fs/cgroup\"") && i > 0 {
			t.Errorf("call %d %s fails: %v", i, call, r.Err)
		}
		if strings.HasPrefix(call, "symlinkat") && !strings.Contains(r.Err.Error(), ": /sys/fs/cgroup/cpu,cpuacct: symlinkat: input/output error") {
			t.Errorf("call %d %s fails: %v", i, call, r.Err)
		}
	}
	// A symlink already there is left.
	r, _ := Mounts(p, imageTree, slices.Index(ok.Calls, "symlinkat(/sys/fs/cgroup/cpu -> cpu,cpuacct)"), syscall.EEXIST)
	if r.Err != nil {
		t.Errorf("an existing symlink: %v", r.Err)
	}
}

// A bind on a mount whose flags are locked (from a more privileged mount
// namespace): the kernel refuses the exact flags (EPERM), the locked
// ones are kept where nothing was asked of them, and asking one off is
// an error in runc's words.
func TestMountsLockedFlags(t *testing.T) {
	const tree = imageTree + "r /locked\n"
	bind := step(0, bootstrap.MountBind, bootstrap.DestBySource, "/locked", "/host/dir", "", "", unix.MS_BIND|unix.MS_NODEV)
	p := &bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{bind}}
	ok, err := Mounts(p, tree, -1, 0)
	if err != nil || ok.Err != nil {
		t.Fatal(err, ok.Err)
	}
	exact := slices.IndexFunc(ok.Calls, func(c string) bool { return strings.HasPrefix(c, "mount_setattr(/locked") })
	r, err := Mounts(p, tree, exact, syscall.EPERM)
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	// nodev asked; ro, nosuid and relatime kept.
	callsInOrder(t, r.Calls, []string{"fstatfs(/locked)", "mount_setattr(/locked, set 0x7, clr 0x2000f8, prop 0x0)"})
	p.Mounts[0].Cleared = unix.MS_RDONLY
	r, _ = Mounts(p, tree, exact, syscall.EPERM)
	want := `mounts[0]: error mounting "/host/dir" to rootfs at "/locked": cannot clear flags locked on the source (ro): mount_setattr: operation not permitted`
	if r.Err == nil || r.Err.Error() != want {
		t.Fatalf("error %v, want %s", r.Err, want)
	}
	p.Mounts[0].Cleared, p.Mounts[0].Flags = 0, unix.MS_BIND|unix.MS_NOATIME
	r, _ = Mounts(p, tree, exact, syscall.EPERM)
	want = `cannot change the atime flags locked on the source (relatime) to noatime: mount_setattr: operation not permitted`
	if r.Err == nil || !strings.HasSuffix(r.Err.Error(), want) {
		t.Fatalf("error %v, want %s", r.Err, want)
	}
}

// prepareRoot's part: "/" gets the propagation, each isolated mount point
// its own, the rootfs is bound onto itself; each failure is named.
func TestMountsPrepare(t *testing.T) {
	p := defaultPlan()
	p.Mounts = p.Mounts[:1]
	p.Prepare = &bootstrap.MountPrepare{RootFlags: unix.MS_SLAVE | unix.MS_REC, Points: []bootstrap.MountPoint{{Path: "/host/dir", Flags: unix.MS_SLAVE}}}
	ok, err := Mounts(p, imageTree, -1, 0)
	if err != nil || ok.Err != nil {
		t.Fatal(err, ok.Err)
	}
	callsInOrder(t, ok.Calls, []string{"open(/)", "mount_setattr(/, recursive, set 0x0, clr 0x0, prop 0x80000)",
		"open(/host/dir)", "mount_setattr(/host/dir, set 0x0, clr 0x0, prop 0x80000)",
		"open_tree(/r, recursive)", "open(/r)", "move_mount(tree:/r -> /)", "open(/r)", "fsopen(proc)"})
	wants := []string{"linux.rootfsPropagation 0x84000: set on /: input/output error", "linux.rootfsPropagation 0x84000: set on /: input/output error",
		"linux.rootfsPropagation: make mount /host/dir slave: input/output error", "linux.rootfsPropagation: make mount /host/dir slave: input/output error",
		`root.path "/r": bind onto itself: open_tree: input/output error`, `root.path "/r": bind onto itself: open: input/output error`,
		`root.path "/r": bind onto itself: move_mount: input/output error`}
	for i, want := range wants {
		r, _ := Mounts(p, imageTree, i, syscall.EIO)
		if r.Err == nil || r.Err.Error() != want || r.OpenFds != 0 {
			t.Errorf("call %d %s fails: %v (%d fds open), want %s", i, ok.Calls[i], r.Err, r.OpenFds, want)
		}
	}
}

// After the mounts: a node of linux.devices (mknod, then its exact mode
// and owner; where mknod is not permitted the host's node, checked,
// bound on an empty file), /dev's links (ptmx replaced), a missing cwd.
func TestMountsDevicesLinksCwd(t *testing.T) {
	null := bootstrap.MountStep{Destination: "/dev/null", Device: &bootstrap.MountDevice{Index: 0, Mode: unix.S_IFCHR | 0o666, Rdev: unix.Mkdev(1, 3)}}
	mine := bootstrap.MountStep{Destination: "/dev/sub/mine", Device: &bootstrap.MountDevice{Index: 1, Mode: unix.S_IFCHR | 0o640, Rdev: unix.Mkdev(1, 5), UID: 7, GID: 8}}
	ptmx := bootstrap.MountStep{Kind: bootstrap.MountSymlink, Dest: bootstrap.DestDir, Opts: bootstrap.MountReplace, Fd: -1, Destination: "/dev",
		Source: "pts/ptmx", Data: "ptmx", Head: "/dev symlinks: ptmx -> pts/ptmx"}
	cwd := bootstrap.MountStep{Kind: bootstrap.MountMkdir, Dest: bootstrap.DestDir, Fd: -1, Destination: "/work/here", Head: `process.cwd "/work/here": make it in the rootfs`}
	p := &bootstrap.MountPlan{Root: "/r", Mounts: []bootstrap.MountStep{null, mine, ptmx, cwd}}
	tree := imageTree + "f /dev/ptmx\n"
	ok, err := Mounts(p, tree, -1, 0)
	if err != nil || ok.Err != nil {
		t.Fatal(err, ok.Err)
	}
	callsInOrder(t, ok.Calls, []string{"mknodat(/dev/null)", "fchmodat(/dev/null, 0666)", "fchownat(/dev/null, 0, 0)",
		"mkdirat(/dev/sub)", "mknodat(/dev/sub/mine)", "fchmodat(/dev/sub/mine, 0640)", "fchownat(/dev/sub/mine, 7, 8)",
		"unlinkat(/dev/ptmx)", "symlinkat(/dev/ptmx -> pts/ptmx)",
		"openat2(/work/here, follow)", "mkdirat(/work)", "mkdirat(/work/here)"})
	mknod := slices.Index(ok.Calls, "mknodat(/dev/null)")
	r, _ := Mounts(p, tree, mknod, syscall.EPERM)
	if r.Err != nil || r.OpenFds != 0 {
		t.Fatalf("mknod not permitted: %v, %d fds open", r.Err, r.OpenFds)
	}
	callsInOrder(t, r.Calls, []string{"open_tree(/dev/null)", "fstat(tree:/dev/null)", "mknodat(/dev/null)", "fstat(/dev/null)", "move_mount(tree:/dev/null -> /dev/null)"})
	// The host's node must be the device asked.
	p.Mounts[0].Device.Rdev = unix.Mkdev(1, 9)
	r, _ = Mounts(p, tree, mknod, syscall.EPERM)
	want := `devices[0] "/dev/null": mknod not permitted, host /dev/null: is not the c device 1:9 (mode 020666, device 1:3)`
	if r.Err == nil || r.Err.Error() != want {
		t.Fatalf("error %v, want %s", r.Err, want)
	}
	p.Mounts[0].Device.Rdev = unix.Mkdev(1, 3)
	for i, call := range ok.Calls {
		r, _ := Mounts(p, tree, i, syscall.EIO)
		if r.OpenFds != 0 {
			t.Errorf("call %d %s fails: %d fds open", i, call, r.OpenFds)
		}
		if i == 0 {
			continue
		}
		if r.Err == nil && !strings.HasPrefix(call, "openat2(/work") {
			t.Errorf("call %d %s fails: no error", i, call)
		}
		if r.Err != nil && !regexp.MustCompile(`^(devices\[[01]\] "/dev/(null|sub/mine)"|/dev symlinks: ptmx -> pts/ptmx|process.cwd "/work/here": make it in the rootfs): .*input/output error$`).MatchString(r.Err.Error()) {
			t.Errorf("call %d %s fails: %v", i, call, r.Err)
		}
	}
}

// Into the rootfs: pivot_root(".", "."), the old root made a slave and
// detached, then "/" the propagation asked after; each failure named.
func TestMountsEnterRoot(t *testing.T) {
	p := defaultPlan()
	p.Mounts = nil
	p.Prepare = &bootstrap.MountPrepare{RootFlags: unix.MS_SHARED | unix.MS_REC, After: unix.MS_SHARED | unix.MS_REC}
	ok, err := MountsAndEnter(p, imageTree, -1, 0)
	if err != nil || ok.Err != nil {
		t.Fatal(err, ok.Err)
	}
	enter := slices.Index(ok.Calls, "fchdir(/)")
	if enter < 0 {
		t.Fatalf("no fchdir in %q", ok.Calls)
	}
	callsInOrder(t, ok.Calls[enter-2:], []string{"open(/)", "open(/r)", "fchdir(/)", "pivot_root(., .)", "fchdir(/)",
		"mount_setattr(., recursive, set 0x0, clr 0x0, prop 0x80000)", "umount2(., 0x2)", "chdir(/)",
		"open(/)", "mount_setattr(/, recursive, set 0x0, clr 0x0, prop 0x100000)"})
	for i := enter - 2; i < len(ok.Calls); i++ {
		r, _ := MountsAndEnter(p, imageTree, i, syscall.EIO)
		if r.Err == nil || !regexp.MustCompile(`^(pivot_root to /r: .*|linux.rootfsPropagation 0x104000: set on the new /): input/output error$`).MatchString(r.Err.Error()) || r.OpenFds != 0 {
			t.Errorf("call %d %s fails: %v, %d fds open", i, ok.Calls[i], r.Err, r.OpenFds)
		}
	}
}

// --no-pivot: the host's proc and sysfs taken away (detached, or covered
// where the kernel refuses), "/" private, the rootfs moved onto it.
func TestMountsEnterRootNoPivot(t *testing.T) {
	p := defaultPlan()
	p.Mounts = nil
	p.Prepare = &bootstrap.MountPrepare{RootFlags: unix.MS_SLAVE | unix.MS_REC, NoPivot: true,
		Hide: []bootstrap.HiddenMount{{FSType: "sysfs", Path: "/sys"}, {FSType: "proc", Path: "/proc"}}}
	ok, err := MountsAndEnter(p, imageTree+"D /sys\nP /proc\n", -1, 0)
	if err != nil || ok.Err != nil {
		t.Fatal(err, ok.Err)
	}
	callsInOrder(t, ok.Calls, []string{"open(/sys)", "mount_setattr(/sys, recursive, set 0x0, clr 0x0, prop 0x80000)", "umount2(/sys, 0x2)",
		"open(/proc)", "umount2(/proc, 0x2)", "chdir(/r)", "mount_setattr(/, set 0x0, clr 0x0, prop 0x40000)", "move_mount(/ -> /)", "chroot(.)", "chdir(/)"})
	// A proc the kernel will not detach (EPERM) is covered.
	r, _ := MountsAndEnter(p, imageTree+"D /sys\nP /proc\n", slices.Index(ok.Calls, "umount2(/proc, 0x2)"), syscall.EPERM)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	callsInOrder(t, r.Calls, []string{"umount2(/proc, 0x2)", "fsopen(tmpfs)", "fsconfig(tmpfs, ro)", "fsmount(tmpfs, 0x1)", "open(/proc)", "move_mount(tmpfs -> /proc)", "chroot(.)"})
	// One gone with its detached parent is passed over.
	r, _ = MountsAndEnter(p, imageTree+"D /sys\nP /proc\n", slices.Index(ok.Calls, "mount_setattr(/proc, recursive, set 0x0, clr 0x0, prop 0x80000)"), syscall.EINVAL)
	if r.Err != nil || slices.Contains(r.Calls, "umount2(/proc, 0x2)") {
		t.Fatalf("%v %q", r.Err, r.Calls)
	}
	r, _ = MountsAndEnter(p, imageTree+"D /sys\nP /proc\n", slices.Index(ok.Calls, "umount2(/sys, 0x2)"), syscall.EBUSY)
	if want := "--no-pivot: move /r to /: hide host sysfs /sys: device or resource busy"; r.Err == nil || r.Err.Error() != want {
		t.Fatalf("error %v, want %s", r.Err, want)
	}
}
