package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

func init() {
	scenarios["masks"] = scenario{check: checkMasks}
}

// An image whose /dev/null is a regular file (no /dev tmpfs in the
// config): masks still use the host's /dev/null; a path listed twice is
// masked once; the masked directories share one read-only tmpfs; a
// dangling symlink is skipped; sysctl writes reach only procfs.
func TestMaskPaths(t *testing.T) {
	requireRoot(t)
	root := newRootfs(t)
	for _, f := range []struct{ name, data string }{{"dev/null", "image's null\n"}} {
		if err := os.WriteFile(filepath.Join(root, f.name), []byte(f.data), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/nowhere", filepath.Join(root, "etc/dangling")); err != nil {
		t.Fatal(err)
	}
	c := &configs.Config{
		Rootfs:     root,
		Namespaces: newMountNS,
		Mounts:     []*configs.Mount{{Source: "proc", Destination: "/proc", Device: "proc", Flags: nodev}},
		MaskPaths: []string{"/etc/secret", "/secretdir", "/etc/secret", "/rodir", "/etc/dangling",
			"/proc/timer_list", "/secretdir/", "/nonexistent"},
		ReadonlyPaths: []string{"/bin", "/proc/sys"},
	}
	runInChild(t, "masks", c, "", defaultFlags)
}

func checkMasks(c *configs.Config, setupErr error) error {
	if setupErr != nil {
		return setupErr
	}
	var errs []error
	fail := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	checkCharDev(fail, "/etc/secret", 1, 3, -1)
	checkCharDev(fail, "/proc/timer_list", 1, 3, -1)
	mounts, err := readMountinfo()
	if err != nil {
		return err
	}
	count := map[string]int{}
	for _, m := range mounts {
		count[m.point]++
	}
	for _, p := range []string{"/etc/secret", "/secretdir", "/rodir", "/proc/timer_list"} {
		if count[p] != 1 {
			fail("%s is mounted on %d times, want once", p, count[p])
		}
	}
	if count["/etc/dangling"] != 0 {
		fail("dangling /etc/dangling was masked")
	}
	var a, b unix.Stat_t
	if err := unix.Stat("/secretdir", &a); err != nil {
		return err
	}
	if err := unix.Stat("/rodir", &b); err != nil {
		return err
	}
	if a.Dev != b.Dev {
		fail("masked directories on two filesystems (%d, %d), want one shared tmpfs", a.Dev, b.Dev)
	}
	if m, _ := findMount(mounts, "/secretdir"); m.fstype != "tmpfs" || !hasOpt(m.opts, "ro") {
		fail("/secretdir mask: %+v, want a read-only tmpfs", m)
	}
	if err := writeFile("/secretdir/x"); !errors.Is(err, unix.EROFS) {
		fail("write in masked /secretdir: %v, want EROFS", err)
	}
	if err := writeFile("/bin/new"); !errors.Is(err, unix.EROFS) {
		fail("write in read-only /bin: %v, want EROFS", err)
	}
	if err := WriteSysctl("kernel.hostname", "x"); !errors.Is(err, unix.EXDEV) {
		fail("sysctl write under read-only /proc/sys: %v, want EXDEV (another mount)", err)
	}
	// The LSM attribute files resolve through the container's procfs
	// (this kernel may have no LSM to accept the write: EINVAL is fine).
	if err := WriteThreadAttr("exec", "x"); err != nil && !errors.Is(err, unix.EINVAL) {
		fail("write the thread's attr/exec: %v", err)
	}
	return errors.Join(errs...)
}

// A write meant for the container's /proc/sys goes nowhere else.
func TestWriteSysctlNeedsProcfs(t *testing.T) {
	requireRoot(t)
	root := newRootfs(t)
	if err := os.MkdirAll(filepath.Join(root, "proc/sys/kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &configs.Config{Rootfs: root, Namespaces: newMountNS}
	runInChild(t, "sysctlnoproc", c, "", defaultFlags)
}

func init() {
	scenarios["sysctlnoproc"] = scenario{check: func(c *configs.Config, setupErr error) error {
		if setupErr != nil {
			return setupErr
		}
		err := WriteSysctl("kernel.hostname", "x")
		if err == nil || !strings.Contains(err.Error(), "/proc: not on procfs") {
			return fmt.Errorf("sysctl write with a plain /proc directory: %v, want not on procfs", err)
		}
		return nil
	}}
}
