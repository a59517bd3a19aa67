package rootfs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// The tests that mount run in a re-exec of the test binary in new mount and
// pid namespaces, so the test process's own mounts are never touched. The
// child runs Setup, then checks the result from inside the new root (the
// launcher, pid 1, finishes the root: nsenter/final.c) and exits 0, or 1 with the reason on stderr.

const (
	childEnv  = "HUSK_ROOTFS_TEST_CHILD"  // the scenario's name
	configEnv = "HUSK_ROOTFS_TEST_CONFIG" // its configs.Config, as JSON
	argEnv    = "HUSK_ROOTFS_TEST_ARG"    // anything else it needs
)

// scenario is what a child does: by default Setup, then check.
type scenario struct {
	run   func(c *configs.Config) error // replaces Setup when set
	check func(c *configs.Config, setupErr error) error
}

var scenarios = map[string]scenario{}

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name))
	}
	os.Exit(m.Run())
}

func runChild(name string) int {
	runtime.LockOSThread()
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "child %s: %v\n", name, err)
		return 1
	}
	s, ok := scenarios[name]
	if !ok {
		return fail(fmt.Errorf("no such scenario"))
	}
	var c configs.Config
	if err := json.Unmarshal([]byte(os.Getenv(configEnv)), &c); err != nil {
		return fail(err)
	}
	if s.run != nil {
		if err := s.run(&c); err != nil {
			return fail(err)
		}
		return 0
	}
	err := SetupWith(&c, nil, nil)
	if s.check == nil {
		if err != nil {
			return fail(err)
		}
		return 0
	}
	if err := s.check(&c, err); err != nil {
		return fail(err)
	}
	return 0
}

// childCmd is the command that runs scenario name on c in new namespaces.
func childCmd(name string, c *configs.Config, arg string, flags uintptr) (*exec.Cmd, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+name, configEnv+"="+string(data), argEnv+"="+arg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	return cmd, nil
}

const defaultFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS

// runInChild runs scenario name in new namespaces, fails t if it fails, and
// checks the host has no mount left under the rootfs.
func runInChild(t *testing.T, name string, c *configs.Config, arg string, flags uintptr) {
	t.Helper()
	cmd, err := childCmd(name, c, arg, flags)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(err.Error(), "operation not permitted") {
			t.Skipf("cannot make namespaces here: %v", err)
		}
		t.Fatalf("scenario %s: %v\n%s", name, err, out)
	}
	if leaked := hostMountsUnder(t, filepath.Dir(c.Rootfs)); len(leaked) > 0 {
		t.Fatalf("mounts left on the host: %v", leaked)
	}
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make namespaces and mount")
	}
}

// hostMountsUnder lists the test process's mount points under dir.
func hostMountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	mounts, err := readMountinfo()
	if err != nil {
		t.Fatal(err)
	}
	var under []string
	for _, m := range mounts {
		if m.point == dir || strings.HasPrefix(m.point, dir+"/") {
			under = append(under, m.point)
		}
	}
	return under
}

// mountEntry is the part of a /proc/self/mountinfo line the tests look at.
type mountEntry struct {
	point, opts, optional, fstype string
}

func readMountinfo() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountinfo(f)
}

func parseMountinfo(r io.Reader) ([]mountEntry, error) {
	var mounts []mountEntry
	s := bufio.NewScanner(r)
	for s.Scan() {
		// ID parent major:minor root point opts [optional...] - fstype source super
		pre, post, ok := strings.Cut(s.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 1 {
			return nil, fmt.Errorf("bad mountinfo line %q", s.Text())
		}
		mounts = append(mounts, mountEntry{
			point: f[4], opts: f[5], optional: strings.Join(f[6:], " "), fstype: g[0],
		})
	}
	return mounts, s.Err()
}

// findMount is the topmost mount at point.
func findMount(mounts []mountEntry, point string) (mountEntry, bool) {
	var found mountEntry
	ok := false
	for _, m := range mounts {
		if m.point == point {
			found, ok = m, true
		}
	}
	return found, ok
}

func hasOpt(opts, opt string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// newRootfs makes a tiny rootfs: a few directories, a marker, a secret, and
// busybox when the host has it. It returns the rootfs path.
func newRootfs(t *testing.T) string {
	t.Helper()
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	for _, d := range []string{"proc", "sys", "dev", "etc", "tmp", "mnt", "bin", "rodir", "secretdir"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"etc/marker": "husk rootfs\n", "etc/secret": "secret\n", "secretdir/f": "x"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(rootfs, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if data, err := os.ReadFile("/bin/busybox"); err == nil {
		if err := os.WriteFile(filepath.Join(rootfs, "bin/busybox"), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return rootfs
}
