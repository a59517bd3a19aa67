package rootfs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// In a user namespace the kernel refuses mknod, sysfs without a new network
// namespace, and any remount that would drop a flag of a mount inherited
// from the host (the flag is "locked"). The outer child makes such a mount
// (a read-only, nosuid, nodev tmpfs), the inner child, in a new user
// namespace, binds it with only "noexec" asked.

func init() {
	scenarios["userns-outer"] = scenario{run: runUsernsOuter}
	scenarios["userns"] = scenario{check: checkUserns}
}

func TestSetupInUserNamespace(t *testing.T) {
	requireRoot(t)
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces:", err)
	}
	rootfs := newRootfs(t)
	locked := t.TempDir()
	c := &configs.Config{
		Rootfs:     rootfs,
		Readonlyfs: true,
		Namespaces: []configs.Namespace{
			{Type: configs.NEWUSER}, {Type: configs.NEWNS}, {Type: configs.NEWPID}, {Type: configs.NEWIPC},
		},
		UIDMappings: []configs.IDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GIDMappings: []configs.IDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		Mounts: []*configs.Mount{
			{Source: "proc", Destination: "/proc", Device: "proc", Flags: nodev},
			{Source: "tmpfs", Destination: "/dev", Device: "tmpfs", Flags: unix.MS_NOSUID, Data: "mode=755"},
			{Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: nodev},
			{Source: "sysfs", Destination: "/sys", Device: "sysfs", Flags: nodev | unix.MS_RDONLY},
			{Source: locked, Destination: "/mnt/locked", Device: "bind", Flags: unix.MS_BIND | unix.MS_NOEXEC},
		},
		Devices: []*configs.Device{
			{Type: 'c', Path: "/dev/null", Major: 1, Minor: 3, FileMode: 0o666},
			{Type: 'c', Path: "/dev/zero", Major: 1, Minor: 5, FileMode: 0o666},
		},
	}
	runInChild(t, "userns-outer", c, locked, syscall.CLONE_NEWNS)
}

// runUsernsOuter makes the locked mount, then runs the inner child in new
// user, mount, pid and ipc namespaces.
func runUsernsOuter(c *configs.Config) error {
	locked := os.Getenv(argEnv)
	if err := mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return err
	}
	if err := mount("tmpfs", locked, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return err
	}
	cmd, err := childCmd("userns", c, locked,
		syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS|syscall.CLONE_NEWPID|syscall.CLONE_NEWIPC)
	if err != nil {
		return err
	}
	cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
	cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

func checkUserns(c *configs.Config, setupErr error) error {
	if setupErr != nil {
		return setupErr
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	mounts, err := readMountinfo()
	if err != nil {
		return err
	}
	wantOpts := map[string][]string{
		"/mnt/locked": {"ro", "nosuid", "nodev", "noexec"}, // kept + asked
		"/sys":        {"ro"},                              // the host's, bound
		"/dev/null":   nil,                                 // bound, mknod refused
	}
	for point, opts := range wantOpts {
		m, ok := findMount(mounts, point)
		if !ok {
			fail("%s not mounted", point)
			continue
		}
		for _, o := range opts {
			if !hasOpt(m.opts, o) {
				fail("%s options %s, want %s", point, m.opts, o)
			}
		}
	}
	checkCharDev(fail, "/dev/null", 1, 3, -1)
	checkCharDev(fail, "/dev/zero", 1, 5, -1)
	return errors.Join(errs...)
}
