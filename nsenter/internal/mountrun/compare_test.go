package mountrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/husk-runtime/husk/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The comparison runs each side in a re-exec of the test binary in new
// mount, pid, IPC and network namespaces (and cgroup, when the config
// has one), under one in a mount namespace
// of its own that stands for the host (hostSide): "go" builds the mounts with Go
// init's rootfs.SetupWith (stopped before pivot_root), "c" with the
// launcher's mounts.c from the plan launch.NewMountPlan makes; each
// prints the mounts under the rootfs (mountinfo), or the error.

const (
	sideEnv   = "HUSK_MOUNTRUN_SIDE"
	configEnv = "HUSK_MOUNTRUN_CONFIG"
)

var errStop = errors.New("stop before pivot_root")

// sharedRoot, an annotation of the config, makes the rootfs a shared
// mount point on the host's side.
const sharedRoot = "husk-test.shared-root"

func TestMain(m *testing.M) {
	if side := os.Getenv(sideEnv); side != "" {
		if host, ok := strings.CutPrefix(side, "host:"); ok {
			os.Exit(hostSide(host))
		}
		os.Exit(child(side))
	}
	os.Exit(m.Run())
}

// hostSide stands for the host: in a mount namespace of its own, it
// makes the host's mounts the binds take, then runs the side in a new
// mount namespace (a copy of this one, whose shared mounts stay peers of
// these), with its output.
func hostSide(side string) int {
	c, root, err := childConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := hostMounts(filepath.Join(filepath.Dir(root), "host")); err != nil {
		fmt.Fprintln(os.Stderr, "the host's mounts:", err)
		return 2
	}
	if c.Annotations[sharedRoot] != "" { // the rootfs a shared mount point of the host's
		for _, m := range []struct {
			src   string
			flags uintptr
		}{{root, unix.MS_BIND}, {"", unix.MS_SHARED}} {
			if err := unix.Mount(m.src, root, "", m.flags, ""); err != nil {
				fmt.Fprintln(os.Stderr, "the rootfs shared:", err)
				return 2
			}
		}
	}
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), sideEnv+"="+side)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	flags := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET)
	if _, ok := c.Namespace(configs.NEWCGROUP); ok {
		flags |= syscall.CLONE_NEWCGROUP
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, side, err)
		return 2
	}
	return 0
}

func child(side string) int {
	runtime.LockOSThread()
	if strings.HasPrefix(side, "bench-") {
		return benchSide(side)
	}
	if kind, ok := strings.CutSuffix(side, "-pivot"); ok {
		return pivotSide(kind)
	}
	c, root, err := childConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if side == "go" {
		err = rootfs.SetupWith(&c, func() error { return errStop }, nil)
		if errors.Is(err, errStop) {
			err = nil
		}
	} else {
		err = launcherMounts(&c, root, side == "c-fd")
	}
	if err != nil {
		fmt.Println("error:", err)
		return 0
	}
	table, err := mountsUnder(root)
	if err == nil {
		var seed, dev string
		seed, err = listTree(filepath.Join(root, "seed"))
		if err == nil {
			dev, err = listDev(filepath.Join(root, "dev"))
		}
		table += seed + dev
		for _, d := range c.Devices {
			var st unix.Stat_t
			serr := unix.Lstat(filepath.Join(root, d.Path), &st)
			table += fmt.Sprintf("device %s %o %d:%d %d:%d %v\n", d.Path, st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), st.Uid, st.Gid, serr)
		}
		if c.Process != nil {
			_, cerr := os.Stat(filepath.Join(root, c.Process.Cwd))
			table += fmt.Sprintf("cwd %s: %v\n", c.Process.Cwd, cerr == nil)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Print(table)
	return 0
}

// listTree lists what is under dir, without following symlinks: each
// entry's path, type and mode, owner, size, modification time (but the
// top directory's), and a symlink's target.
func listTree(dir string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		target, _ := os.Readlink(p)
		mtime := fmt.Sprintf("%d.%09d", st.Mtim.Sec, st.Mtim.Nsec)
		if p == dir {
			mtime = "-" // the new tmpfs's root: its own time
		}
		fmt.Fprintf(&b, "seed%s %o %d:%d %d %s %s\n", strings.TrimPrefix(p, dir), st.Mode, st.Uid, st.Gid, st.Size, mtime, target)
		return nil
	})
	if os.IsNotExist(err) {
		return "", nil
	}
	return b.String(), err
}

// hostMounts makes the host's side of the binds: a submount in the
// host's directory, for bind and rbind to differ, and the directory a
// shared mount with a peer (host/peer), for the propagation.
func hostMounts(host string) error {
	dir := filepath.Join(host, "dir")
	for _, m := range []struct {
		src, dst, fstype string
		flags            uintptr
	}{
		{"sub", filepath.Join(dir, "sub"), "tmpfs", 0},
		{dir, dir, "", unix.MS_BIND | unix.MS_REC},
		{"", dir, "", unix.MS_SHARED | unix.MS_REC},
		{dir, filepath.Join(host, "peer"), "", unix.MS_BIND | unix.MS_REC},
	} {
		if err := unix.Mount(m.src, m.dst, m.fstype, m.flags, "size=1m"); err != nil {
			return fmt.Errorf("mount %s on %s: %w", m.src, m.dst, err)
		}
	}
	return nil
}

// launcherMounts makes the launcher's mounts (prepareRoot's part among
// them), and checks they leave no fd open. With fds (side "c-fd"), every bind's
// source is an fd opened beforehand, as the parent opens them for a
// user namespace or an idmap: an O_PATH fd, or every other one a
// detached tree (open_tree).
func launcherMounts(c *configs.Config, root string, fds bool) error {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return err
	}
	own, err := rootfs.ParseOwnCgroups(f)
	f.Close()
	if err != nil {
		return err
	}
	plan, err := launch.NewMountPlan(c, launch.MountEnv{Cgroups: own})
	if err != nil {
		return err
	}
	before, _ := os.ReadDir("/proc/self/fd")
	if fds {
		// The sources are opened after prepareRoot's part, as the
		// parent opens them (MOUNT_SOURCE) while init mounts: a tree
		// cloned before "/" is made rslave stays a peer of the host's
		// mounts.
		prep := *plan
		prep.Mounts = nil
		if err := Run(&prep); err != nil {
			return err
		}
		plan.Prepare = nil
		if err := sourcesAsFds(plan, root); err != nil {
			return err
		}
	}
	if err := Run(plan); err != nil {
		return err
	}
	if after, _ := os.ReadDir("/proc/self/fd"); len(after) != len(before) {
		return fmt.Errorf("fds open: %d before the mounts, %d after", len(before), len(after))
	}
	return nil
}

func sourcesAsFds(plan *bootstrap.MountPlan, root string) error {
	detached := false
	for i := range plan.Mounts {
		s := &plan.Mounts[i]
		if s.Kind != bootstrap.MountBind {
			continue
		}
		src := s.Source
		if s.Opts&bootstrap.MountInRoot != 0 {
			src = filepath.Join(root, s.Source)
		}
		fd, err := rootfs.OpenSource(root, src)
		if err != nil {
			return err
		}
		if detached {
			flags := unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH
			if s.Flags&unix.MS_REC != 0 {
				flags |= unix.AT_RECURSIVE
			}
			tree, err := unix.OpenTree(fd, "", uint(flags))
			unix.Close(fd)
			if err != nil {
				return fmt.Errorf("open_tree %s: %w", src, err)
			}
			fd, s.Opts = tree, s.Opts|bootstrap.MountDetached
		}
		s.Kind, s.Fd, s.Opts = bootstrap.MountBindFd, int32(fd), s.Opts&^bootstrap.MountInRoot
		detached = !detached
	}
	return nil
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

var anonDev = regexp.MustCompile(`^0:\d+$`)
var peerGroup = regexp.MustCompile(`^(shared|master):\d+$`)

// mountsUnder is the mount table under root, one line a mount: the
// device (0:N for any anonymous one), the filesystem root, the mount
// point inside root, its options, its propagation, the type, the
// source, the superblock's options; the bundle's path is BUNDLE.
func mountsUnder(root string) (string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		pre, post, _ := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		point := f[4]
		if point != root && !strings.HasPrefix(point, root+"/") {
			if point == "/" || strings.HasPrefix(root, point+"/") { // a parent: its propagation
				fmt.Fprintf(&b, "parent %s [%s]\n", point, peerGroups(f[6:]))
			}
			continue
		}
		dev := f[2]
		if anonDev.MatchString(dev) {
			dev = "0:N"
		}
		fsRoot := strings.Replace(f[3], filepath.Dir(root), "BUNDLE", 1)
		fmt.Fprintf(&b, "%s %s /%s %s [%s] %s\n", dev, fsRoot, strings.TrimPrefix(strings.TrimPrefix(point, root), "/"),
			f[5], peerGroups(f[6:]), strings.Join(g, " "))
	}
	return b.String(), nil
}

// listDev lists /dev's own entries: name, type and mode, device, owner,
// a symlink's target.
func listDev(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range entries {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, e.Name()), &st); err != nil {
			return "", err
		}
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "dev/%s %o %d:%d %d:%d %s\n", e.Name(), st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), st.Uid, st.Gid, target)
	}
	return b.String(), nil
}

// peerGroups are a mountinfo line's optional fields, without the peer
// group ids, which vary from run to run.
func peerGroups(optional []string) string {
	out := make([]string, len(optional))
	for i, o := range optional {
		out[i] = peerGroup.ReplaceAllString(o, "$1:N")
	}
	return strings.Join(out, " ")
}

// bundle makes a rootfs with an image's tree, and host files to bind,
// and returns the example config on it, edited.
func bundle(t testing.TB, edit func(s *specs.Spec, host string)) *configs.Config {
	t.Helper()
	dir := t.TempDir()
	rootfsDir := filepath.Join(dir, "rootfs")
	for _, d := range []string{"proc", "sys", "dev", "etc", "tmp", "srv", "run", "host/dir/sub", "host/peer"} {
		where := filepath.Join(rootfsDir, d)
		if strings.HasPrefix(d, "host") {
			where = filepath.Join(dir, d)
		}
		if err := os.MkdirAll(where, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(rootfsDir, "run"), 0o710); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"rootfs/etc/hosts": "x\n", "rootfs/srv/file": "f\n", "host/file": "h\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := seedTree(filepath.Join(rootfsDir, "seed")); err != nil {
		t.Fatal(err)
	}
	// A symlink that leads out of the root, and one into /proc.
	if err := os.Symlink("/../../../tmp", filepath.Join(rootfsDir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/sys", filepath.Join(rootfsDir, "toproc")); err != nil {
		t.Fatal(err)
	}
	s := specconv.Example()
	s.Root.Path = rootfsDir
	edit(s, filepath.Join(dir, "host"))
	c, _, err := specconv.Convert(s, specconv.Options{Bundle: dir})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sides runs Go init's side and the launcher's, each on a bundle of its
// own (what one side makes in the image must not be there for the
// other), and returns their outputs.
func sides(t *testing.T, edit func(s *specs.Spec, host string)) (string, string) {
	t.Helper()
	return runSide(t, "go", bundle(t, edit)), runSide(t, "c", bundle(t, edit))
}

// seedTree makes the image's directory a tmpcopyup copies: a file of
// another owner with a time of its own, a setuid file, a directory, a
// symlink, a fifo.
func seedTree(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o750); err != nil {
		return err
	}
	for name, mode := range map[string]os.FileMode{"file": 0o640, "sub/setuid": 0o755 | os.ModeSetuid} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("seed "+name+"\n"), 0o600); err != nil {
			return err
		}
		if err := os.Chown(p, 1000, 1000); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o620); err != nil {
		return err
	}
	if err := os.Symlink("../etc/hosts", filepath.Join(dir, "link")); err != nil {
		return err
	}
	for _, p := range []string{"file", "sub/setuid", "sub", "fifo", "link"} {
		ts := []unix.Timespec{{Sec: 1000000000, Nsec: 5}, {Sec: 1000000001, Nsec: 7}}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, p), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
	}
	return os.Chmod(dir, 0o711)
}

func runSide(t testing.TB, side string, c *configs.Config) string {
	t.Helper()
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), sideEnv+"=host:"+side, configEnv+"="+string(data))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("side %s: %v: %s", side, err, ee.Stderr)
		}
		t.Fatalf("side %s: %v", side, err)
	}
	return string(out)
}

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make namespaces and mount")
	}
}

// The runc spec's mounts (but cgroup), a tmpfs without mode=, and binds:
// a file, a directory, read-only, recursive, one whose destination is a
// symlink leading out of the root, one whose source is in the root; the
// propagations, from a host directory that is shared with a peer; /dev's
// nodes (a device of the config's in a directory to make) and links, a
// missing cwd; a read-only tmpcopyup of a directory with a file of another owner, a
// setuid file, a symlink, a fifo, times of their own. The
// launcher makes the same mount table as Go init.
func TestSameMountsAsGoInit(t *testing.T) {
	requireRoot(t)
	edit := func(s *specs.Spec, host string) {
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.CgroupNamespace})
		s.Process.Cwd = "/work/here"
		mode, uid := os.FileMode(0o640), uint32(1000)
		s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/sub/mine", Type: "c", Major: 1, Minor: 5, FileMode: &mode, UID: &uid, GID: &uid}}
		s.Mounts = append(s.Mounts,
			specs.Mount{Destination: "/run", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev"}},
			specs.Mount{Destination: "/etc/hostfile", Source: host + "/file", Options: []string{"bind", "ro"}},
			specs.Mount{Destination: "/data", Source: host + "/dir", Options: []string{"bind"}},
			specs.Mount{Destination: "/rdata", Source: host + "/dir", Options: []string{"rbind", "ro", "nosuid", "rprivate"}},
			specs.Mount{Destination: "/rodata", Source: host + "/dir", Options: []string{"bind", "ro", "noexec", "noatime"}},
			specs.Mount{Destination: "/rro", Source: host + "/dir", Options: []string{"rbind", "rro", "rnosuid"}},
			specs.Mount{Destination: "/escape/inside", Source: host + "/file", Options: []string{"bind"}},
			specs.Mount{Destination: "/srv/again", Source: s.Root.Path + "/srv/file", Options: []string{"bind", "nodev"}},
			specs.Mount{Destination: "/shared", Source: host + "/dir", Options: []string{"rbind", "rshared"}},
			specs.Mount{Destination: "/slave", Source: host + "/dir", Options: []string{"rbind", "rslave"}},
			specs.Mount{Destination: "/private", Source: host + "/dir", Options: []string{"bind", "private"}},
			specs.Mount{Destination: "/tmpshared", Type: "tmpfs", Source: "tmpfs", Options: []string{"shared"}},
			specs.Mount{Destination: "/seed", Type: "tmpfs", Source: "tmpfs", Options: []string{"tmpcopyup", "ro", "nodev"}},
		)
	}
	goSide, cSide := sides(t, edit)
	if goSide != cSide {
		t.Fatalf("the mounts differ\nGo init:\n%s\nlauncher:\n%s", goSide, cSide)
	}
	// The sources as the parent's fds, O_PATH or detached trees: the same
	// mounts. A detached tree, made before the mounts, has an older mount
	// id, which mountinfo lists first: the lines are compared sorted.
	if fdSide := runSide(t, "c-fd", bundle(t, edit)); sortedLines(fdSide) != sortedLines(goSide) {
		t.Fatalf("the mounts differ\nGo init:\n%s\nlauncher, the sources as fds:\n%s", goSide, fdSide)
	}
	for _, want := range []string{" /tmp/inside ", " /run rw,nosuid,nodev,relatime [] tmpfs tmpfs rw,mode=710", " /rro/sub ro,nosuid", "/shared rw,relatime [shared:N master:N]", "/slave rw,relatime [master:N]", "/private rw,relatime []", "/seed ro,nodev,relatime [] tmpfs tmpfs rw,mode=711",
		"seed/sub/setuid 104755 1000:1000 16 1000000001.000000007", "seed/file 100640 1000:1000 10 1000000001.000000007",
		"seed/link 120777 0:0 12 1000000001.000000007 ../etc/hosts", "seed/fifo 10600 0:0 0 1000000001.000000007", "seed 40711 0:0 ",
		"dev/null 20666 1:3 0:0 ", "dev/ptmx 120777 0:0 0:0 pts/ptmx", "dev/fd 120777 0:0 0:0 /proc/self/fd", "cwd /work/here: true", "device /dev/sub/mine 20640 1:5 1000:1000 <nil>"} {
		if !strings.Contains(cSide, want) {
			t.Errorf("no %q in:\n%s", want, cSide)
		}
	}
	t.Logf("both:\n%s", cSide)
}

// A refused mount gets the same words from both.
func TestSameErrorsAsGoInit(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name string
		m    specs.Mount
		want string
	}{
		{"a bind through a symlink into /proc", specs.Mount{Destination: "/toproc/x", Source: "/tmp", Options: []string{"bind"}},
			`cannot be mounted because it is inside /proc`},
		{"sysfs through a symlink", specs.Mount{Destination: "/escape/sys", Type: "sysfs", Source: "sysfs"},
			`must be mounted on ordinary directory, /escape is not one`},
		{"a missing source", specs.Mount{Destination: "/x", Source: "/nonexistent-husk-mnt40", Options: []string{"bind"}},
			`open /nonexistent-husk-mnt40: no such file or directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goSide, cSide := sides(t, func(s *specs.Spec, host string) { s.Mounts = append(s.Mounts, tc.m) })
			if goSide != cSide || !strings.Contains(cSide, tc.want) {
				t.Fatalf("Go init: %s\nlauncher: %s\nwant both with %q", goSide, cSide, tc.want)
			}
		})
	}
}

// Without a cgroup namespace, a cgroup mount binds the container's own
// directories of the host's hierarchies (here the test's own).
func TestSameCgroupBindsAsGoInit(t *testing.T) {
	requireRoot(t)
	goSide, cSide := sides(t, func(s *specs.Spec, host string) {})
	if goSide != cSide {
		t.Fatalf("the mounts differ\nGo init:\n%s\nlauncher:\n%s", goSide, cSide)
	}
	if !strings.Contains(cSide, " /sys/fs/cgroup/memory ro,") {
		t.Errorf("no read-only bind of the memory hierarchy in:\n%s", cSide)
	}
	t.Logf("both:\n%s", cSide)
}

// linux.rootfsPropagation, with the rootfs a plain directory or a shared
// mount point of the host's: the same propagation on "/", the rootfs and
// its parent (isolateRoot), decided by the parent for the launcher.
func TestSamePropagationAsGoInit(t *testing.T) {
	requireRoot(t)
	for _, prop := range []string{"", "rslave", "rprivate", "rshared", "slave", "private", "shared"} {
		for _, shared := range []bool{false, true} {
			t.Run(fmt.Sprintf("%q shared-root %v", prop, shared), func(t *testing.T) {
				goSide, cSide := sides(t, func(s *specs.Spec, host string) {
					s.Linux.RootfsPropagation = prop
					if shared {
						s.Annotations = map[string]string{sharedRoot: "1"}
					}
				})
				if goSide != cSide {
					t.Fatalf("the mounts differ\nGo init:\n%s\nlauncher:\n%s", goSide, cSide)
				}
			})
		}
	}
}

// pivotSide builds the whole rootfs up to its pivot_root, with Go init
// ("go") or the launcher ("c"), then prints the mount table the process
// now sees, normalized as mountsUnder does.
func pivotSide(kind string) int {
	c, root, err := childConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if kind == "go" {
		err = rootfs.SetupWith(&c, nil, nil)
	} else {
		var plan *bootstrap.MountPlan
		if plan, err = launch.NewMountPlan(&c, launch.MountEnv{Cgroups: map[string]string{}}); err == nil {
			err = RunAndEnter(plan)
		}
	}
	if err != nil {
		fmt.Println("error:", err)
		return 0
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		pre, post, _ := strings.Cut(line, " - ")
		f := strings.Fields(pre)
		dev := f[2]
		if anonDev.MatchString(dev) {
			dev = "0:N"
		}
		fmt.Printf("%s %s %s %s [%s] %s\n", dev, strings.Replace(f[3], filepath.Dir(root), "BUNDLE", 1), f[4], f[5], peerGroups(f[6:]), post)
	}
	wd, _ := os.Getwd()
	fmt.Println("cwd", wd)
	return 0
}

// The whole rootfs up to pivot_root and through it (or, with --no-pivot,
// moved onto "/"): the process's own mount table after, with each
// linux.rootfsPropagation, the same from Go init and from the launcher.
func TestSamePivotAsGoInit(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		prop    string
		noPivot bool
	}{{"", false}, {"rslave", false}, {"rshared", false}, {"shared", false}, {"private", false}, {"unbindable", false},
		{"", true}, {"rshared", true}, {"private", true}} {
		t.Run(fmt.Sprintf("%q no-pivot %v", tc.prop, tc.noPivot), func(t *testing.T) {
			edit := func(s *specs.Spec, host string) {
				s.Linux.RootfsPropagation = tc.prop
				s.Mounts = slices.DeleteFunc(s.Mounts, func(m specs.Mount) bool { return m.Type == "cgroup" })
				s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: host + "/dir", Options: []string{"rbind", "rshared"}})
			}
			bundles := [2]*configs.Config{bundle(t, edit), bundle(t, edit)}
			for _, c := range bundles {
				c.NoPivotRoot = tc.noPivot
			}
			goSide, cSide := runSide(t, "go-pivot", bundles[0]), runSide(t, "c-pivot", bundles[1])
			if goSide != cSide || strings.HasPrefix(goSide, "error") {
				t.Fatalf("Go init:\n%s\nlauncher:\n%s", goSide, cSide)
			}
			if !strings.Contains(cSide, "BUNDLE/rootfs / ") || !strings.Contains(cSide, "cwd /\n") {
				t.Fatalf("no rootfs as / in:\n%s", cSide)
			}
		})
	}
}

// childConfig is the config a child side runs (configEnv), and its
// rootfs's path with symlinks resolved.
func childConfig() (configs.Config, string, error) {
	var c configs.Config
	if err := json.Unmarshal([]byte(os.Getenv(configEnv)), &c); err != nil {
		return c, "", err
	}
	root, err := filepath.EvalSymlinks(c.Rootfs)
	return c, root, err
}
