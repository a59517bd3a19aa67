package rootfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

func init() {
	scenarios["full"] = scenario{check: checkFull}
	scenarios["inroot"] = scenario{check: checkInRoot}
	scenarios["mounterror"] = scenario{check: wantError(`mounts[1]: error mounting "bogus" to rootfs at "/bad": mount: no such device`)}
	scenarios["nomountns"] = scenario{run: setupWithoutMountNamespace}
}

const nodev = unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV

var newMountNS = []configs.Namespace{{Type: configs.NEWNS}}

// fullConfig is a config like `runc spec` makes, plus binds, a propagation
// flag, symlink-escape attempts.
func fullConfig(rootfs, hostDir, escapeDir string) *configs.Config {
	dev := func(name string, major, minor int64) *configs.Device {
		return &configs.Device{Type: 'c', Path: "/dev/" + name, Major: major, Minor: minor, FileMode: 0o666}
	}
	return &configs.Config{
		Rootfs:     rootfs,
		Readonlyfs: true,
		Namespaces: []configs.Namespace{{Type: configs.NEWNS}, {Type: configs.NEWPID}, {Type: configs.NEWUTS}},
		Mounts: []*configs.Mount{
			{Source: "proc", Destination: "/proc", Device: "proc", Flags: nodev},
			{Source: "tmpfs", Destination: "/dev", Device: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_STRICTATIME, Data: "mode=755,size=65536k"},
			{Source: "devpts", Destination: "/dev/pts", Device: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: "newinstance,ptmxmode=0666,mode=0620"},
			{Source: "shm", Destination: "/dev/shm", Device: "tmpfs", Flags: nodev, Data: "mode=1777,size=65536k"},
			{Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: nodev},
			{Source: "sysfs", Destination: "/sys", Device: "sysfs", Flags: nodev | unix.MS_RDONLY},
			{Source: hostDir, Destination: "/mnt/data", Device: "bind", Flags: unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY},
			{Source: filepath.Join(hostDir, "file"), Destination: "/etc/hostfile", Device: "bind", Flags: unix.MS_BIND},
			{Source: "tmpfs", Destination: "/mnt/shared", Device: "tmpfs", PropagationFlags: []int{unix.MS_SHARED}},
			// evil -> escapeDir and evilfile -> escapeDir/file in the rootfs.
			{Source: "tmpfs", Destination: "/evil", Device: "tmpfs"},
			{Source: filepath.Join(hostDir, "file"), Destination: "/evilfile", Device: "bind", Flags: unix.MS_BIND},
		},
		Devices: []*configs.Device{
			dev("null", 1, 3), dev("zero", 1, 5), dev("full", 1, 7),
			dev("random", 1, 8), dev("urandom", 1, 9), dev("tty", 5, 0),
		},
	}
}

func TestSetupFull(t *testing.T) {
	requireRoot(t)
	rootfs := newRootfs(t)
	hostDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(hostDir, "file"), []byte("from host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	escapeDir, err := os.MkdirTemp("", "husk-escape-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(escapeDir) })
	if err := os.Symlink(escapeDir, filepath.Join(rootfs, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(escapeDir, "file"), filepath.Join(rootfs, "evilfile")); err != nil {
		t.Fatal(err)
	}

	if _, err := os.Stat(filepath.Join(rootfs, "bin/busybox")); err != nil {
		t.Log("no /bin/busybox on the host: not running a program in the container")
	}
	runInChild(t, "full", fullConfig(rootfs, hostDir, escapeDir), escapeDir, defaultFlags)

	if entries, err := os.ReadDir(escapeDir); err != nil || len(entries) != 0 {
		t.Errorf("host dir %s behind a rootfs symlink was touched: %v %v", escapeDir, entries, err)
	}
	if leaked := hostMountsUnder(t, escapeDir); len(leaked) > 0 {
		t.Errorf("mounts on the host's %s: %v", escapeDir, leaked)
	}
	// Inside the rootfs instead: the child found both mounts at escapeDir.
}

// checkFull looks at the container from inside, after Setup.
func checkFull(c *configs.Config, setupErr error) error {
	if setupErr != nil {
		return setupErr
	}
	escapeDir := os.Getenv(argEnv)
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if wd, _ := os.Getwd(); wd != "/" {
		fail("cwd %q, want /", wd)
	}
	if _, err := os.Stat("/etc/marker"); err != nil {
		fail("not in the rootfs: %v", err)
	}
	if _, err := os.Stat("/usr"); err == nil {
		fail("host's /usr visible: old root not detached")
	}
	mounts, err := readMountinfo()
	if err != nil {
		return err
	}
	want := map[string]string{
		"/proc": "proc", "/dev": "tmpfs", "/dev/pts": "devpts", "/dev/shm": "tmpfs",
		"/dev/mqueue": "mqueue", "/sys": "sysfs", "/mnt/shared": "tmpfs", escapeDir: "tmpfs",
		"/mnt/data": "", "/etc/hostfile": "", escapeDir + "/file": "",
	}
	for point, fstype := range want {
		m, ok := findMount(mounts, point)
		switch {
		case !ok:
			fail("%s not mounted", point)
		case fstype != "" && m.fstype != fstype:
			fail("%s is %s, want %s", point, m.fstype, fstype)
		}
	}
	for _, point := range []string{"/sys", "/mnt/data"} {
		if m, _ := findMount(mounts, point); !hasOpt(m.opts, "ro") {
			fail("%s not read-only: %s", point, m.opts)
		}
	}
	if m, _ := findMount(mounts, "/mnt/shared"); !strings.Contains(m.optional, "shared:") {
		fail("/mnt/shared propagation %q, want shared", m.optional)
	}
	if m, _ := findMount(mounts, "/dev"); !hasOpt(m.opts, "nosuid") {
		fail("/dev options %s, want nosuid", m.opts)
	}

	checkCharDev(fail, "/dev/null", 1, 3, 0o666)
	checkCharDev(fail, "/dev/tty", 5, 0, 0o666)
	links := map[string]string{"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0", "/dev/ptmx": "pts/ptmx"}
	if _, err := os.Stat("/proc/kcore"); err == nil { // not every kernel has it
		links["/dev/core"] = "/proc/kcore"
	}
	for link, target := range links {
		if got, err := os.Readlink(link); err != nil || got != target {
			fail("%s -> %q (%v), want %q", link, got, err, target)
		}
	}

	if data, err := os.ReadFile("/etc/hostfile"); err != nil || string(data) != "from host\n" {
		fail("/etc/hostfile reads %q, %v", data, err)
	}
	for _, p := range []string{"/mnt/data/newfile"} {
		if err := writeFile(p); !errors.Is(err, unix.EROFS) {
			fail("write %s: %v, want EROFS", p, err)
		}
	}
	for _, p := range []string{"/dev/shm/ok", "/dev/null"} {
		if err := writeFile(p); err != nil {
			fail("write %s: %v", p, err)
		}
	}
	if _, err := os.Stat("/bin/busybox"); err == nil {
		out, err := exec.Command("/bin/busybox", "ls", "/dev").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "urandom") {
			fail("busybox ls /dev: %v: %s", err, out)
		}
	}
	return errors.Join(errs...)
}

func checkCharDev(fail func(string, ...any), path string, major, minor uint32, perm int) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		fail("%s: %v", path, err)
		return
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || unix.Major(st.Rdev) != major || unix.Minor(st.Rdev) != minor {
		fail("%s: mode %o dev %d:%d, want char %d:%d", path, st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), major, minor)
	}
	if perm >= 0 && int(st.Mode&0o777) != perm {
		fail("%s: perm %o, want %o", path, st.Mode&0o777, perm)
	}
}

func writeFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte("x"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func TestSetupNoPivot(t *testing.T) {
	requireRoot(t)
	c := &configs.Config{
		Rootfs:      newRootfs(t),
		Namespaces:  newMountNS,
		NoPivotRoot: true,
		Mounts:      []*configs.Mount{{Source: "proc", Destination: "/proc", Device: "proc", Flags: nodev}},
	}
	runInChild(t, "inroot", c, "", defaultFlags)
}

func TestSetupRootPropagation(t *testing.T) {
	requireRoot(t)
	for name, flags := range map[string]int{
		"shared":  unix.MS_SHARED | unix.MS_REC,
		"private": unix.MS_PRIVATE | unix.MS_REC,
	} {
		for _, noPivot := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nopivot=%v", name, noPivot), func(t *testing.T) {
				c := &configs.Config{
					Rootfs:          newRootfs(t),
					Namespaces:      newMountNS,
					RootPropagation: flags,
					NoPivotRoot:     noPivot,
					Mounts:          []*configs.Mount{{Source: "proc", Destination: "/proc", Device: "proc", Flags: nodev}},
				}
				runInChild(t, "inroot", c, "", defaultFlags)
			})
		}
	}
}

// checkInRoot checks the process is in the rootfs, with /proc mounted.
func checkInRoot(c *configs.Config, setupErr error) error {
	if setupErr != nil {
		return setupErr
	}
	if wd, _ := os.Getwd(); wd != "/" {
		return fmt.Errorf("cwd %q, want /", wd)
	}
	if _, err := os.Stat("/etc/marker"); err != nil {
		return fmt.Errorf("not in the rootfs: %v", err)
	}
	if _, err := os.Stat("/usr"); err == nil {
		return fmt.Errorf("host's /usr visible")
	}
	mounts, err := readMountinfo()
	if err != nil {
		return err
	}
	if m, ok := findMount(mounts, "/proc"); !ok || m.fstype != "proc" {
		return fmt.Errorf("/proc not mounted: %+v", m)
	}
	return nil
}

// wantError checks that setup failed with exactly msg.
func wantError(msg string) func(*configs.Config, error) error {
	return func(_ *configs.Config, err error) error {
		if err == nil || err.Error() != msg {
			return fmt.Errorf("error %q, want %q", err, msg)
		}
		return nil
	}
}

func TestSetupErrorsNameTheMount(t *testing.T) {
	requireRoot(t)
	t.Run("mount", func(t *testing.T) {
		c := &configs.Config{Rootfs: newRootfs(t), Namespaces: newMountNS, Mounts: []*configs.Mount{
			{Source: "proc", Destination: "/proc", Device: "proc"},
			{Source: "bogus", Destination: "/bad", Device: "nosuchfs"},
		}}
		runInChild(t, "mounterror", c, "", defaultFlags)
	})
}

// Without a mount namespace the container shares the host's: SetupWith
// mounts nothing (it would make the host's "/" a slave and leave mounts
// behind), runs the hook, and chroots into root.path, as runc does.
func TestSetupWithoutMountNamespaceChroots(t *testing.T) {
	requireRoot(t)
	root := newRootfs(t)
	if err := os.WriteFile(filepath.Join(root, "chroot-marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &configs.Config{Rootfs: root, Mounts: []*configs.Mount{{Device: "tmpfs", Destination: "/x"}}, Readonlyfs: true}
	runInChild(t, "nomountns", c, "", defaultFlags)
}

// setupWithoutMountNamespace is the child of
// TestSetupWithoutMountNamespaceChroots.
func setupWithoutMountNamespace(c *configs.Config) error {
	before, err := readMountinfo()
	if err != nil {
		return err
	}
	// Opened now, read after the chroot: it still lists the mounts as
	// seen from the old root.
	later, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer later.Close()
	ran := false
	if err := SetupWith(c, func() error { ran = true; return nil }, nil); err != nil {
		return err
	}
	if !ran {
		return errors.New("the hook did not run")
	}
	if _, err := os.Stat("/chroot-marker"); err != nil {
		return fmt.Errorf("/ is not root.path: %w", err)
	}
	after, err := parseMountinfo(later)
	if err != nil {
		return err
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		return fmt.Errorf("the mounts changed:\n%v\n%v", before, after)
	}
	// The root has no /proc: the host's is kept for ReopenFd.
	fd, err := ReopenFd(int(later.Fd()), unix.O_RDONLY)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}
