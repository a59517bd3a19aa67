package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

func init() {
	scenarios["cgroup"] = scenario{check: checkCgroup}
}

// A cgroup mount shows the container its own cgroup as the hierarchy's
// root, bound without a cgroup namespace, mounted fresh with one.
func TestSetupCgroupMount(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name     string
		cgroupns bool
	}{{"bind", false}, {"cgroupns", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &configs.Config{
				Rootfs:     newRootfs(t),
				Namespaces: newMountNS,
				Mounts: []*configs.Mount{
					{Source: "proc", Destination: "/proc", Device: "proc", Flags: nodev},
					{Source: "sysfs", Destination: "/sys", Device: "sysfs", Flags: nodev | unix.MS_RDONLY},
					{Source: "cgroup", Destination: "/sys/fs/cgroup", Device: "cgroup", Flags: nodev | unix.MS_RDONLY | unix.MS_RELATIME},
				},
			}
			flags := uintptr(defaultFlags)
			if tc.cgroupns {
				if _, err := os.Stat("/proc/self/ns/cgroup"); err != nil {
					t.Skip("no cgroup namespaces:", err)
				}
				c.Namespaces = []configs.Namespace{{Type: configs.NEWNS}, {Type: configs.NEWCGROUP}}
				flags |= syscall.CLONE_NEWCGROUP
			}
			runInChild(t, "cgroup", c, "", flags)
		})
	}
}

// checkCgroup checks that every hierarchy the container sees has the
// container's own cgroup as its root, with its init (pid 1) in it.
func checkCgroup(c *configs.Config, setupErr error) error {
	if setupErr != nil {
		return setupErr
	}
	cgroups, err := mountinfo.GetMounts(mountinfo.PrefixFilter("/sys/fs/cgroup"))
	if err != nil {
		return err
	}
	own, err := ownCgroups()
	if err != nil {
		return err
	}
	var errs []error
	found := 0
	for _, m := range cgroups {
		if m.FSType != "cgroup" && m.FSType != "cgroup2" {
			continue
		}
		found++
		if !hasOpt(m.Options, "ro") {
			errs = append(errs, fmt.Errorf("%s not read-only: %s", m.Mountpoint, m.Options))
		}
		if key, _ := hierarchyKey(m, own); m.Root != own[key] {
			errs = append(errs, fmt.Errorf("%s shows cgroup %s, want the container's own %s", m.Mountpoint, m.Root, own[key]))
		}
		procs, err := os.ReadFile(path.Join(m.Mountpoint, "cgroup.procs"))
		if err != nil || !strings.Contains("\n"+string(procs), "\n1\n") {
			errs = append(errs, fmt.Errorf("%s/cgroup.procs has %q (%v), want pid 1", m.Mountpoint, procs, err))
		}
	}
	if found == 0 {
		errs = append(errs, fmt.Errorf("no cgroup mounts under /sys/fs/cgroup: %+v", cgroups))
	}
	if err := writeFile("/sys/fs/cgroup/newfile"); !errors.Is(err, unix.EROFS) {
		errs = append(errs, fmt.Errorf("write /sys/fs/cgroup/newfile: %v, want EROFS", err))
	}
	return errors.Join(errs...)
}
