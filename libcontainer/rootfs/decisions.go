package rootfs

import (
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/moby/sys/mountinfo"
)

// The decisions Go init makes about a mount, exported for the launcher's
// mount plan (libcontainer/launch/mountplan.go), which must make the
// same ones: one rule each, in one place.

// IsReadonlyDev reports whether m is a read-only filesystem on /dev,
// which is mounted writable and made read-only once /dev is filled.
func IsReadonlyDev(m *configs.Mount) bool { return isReadonlyDev(m) }

// HostFallback is the host directory bound instead of m when the kernel
// refuses its filesystem with EPERM, or "".
func HostFallback(c *configs.Config, m *configs.Mount) string { return hostFallback(c, m) }

// HasOption reports whether the comma-separated data sets key=.
func HasOption(data, key string) bool { return hasOption(data, key) }

// MountSource is m's source, or its type when it has none: what mount(2)
// gets, and what errors name.
func MountSource(m *configs.Mount) string { return mountSource(m) }

// CgroupRoot is where cgroup hierarchies are mounted.
const CgroupRoot = cgroupRoot

// HierarchyKey is how /proc/PID/cgroup names the hierarchy h ("" for
// cgroup2, else its controllers, "cpu,cpuacct"); false when it has none.
func HierarchyKey(h *mountinfo.Info, own map[string]string) (string, bool) {
	return hierarchyKey(h, own)
}

// Parents are the table's entries at root and at its parents, which
// isolateRoot looks at (IsolatePoints).
func (t Mounts) Parents(root string) []*mountinfo.Info {
	return t.filter(mountinfo.ParentsFilter(root))
}

// SetsUpDev reports whether Go init fills /dev (setupDev): the config
// mounts a tmpfs there; and whether devpts is on /dev/pts.
func SetsUpDev(c *configs.Config) (dev, devpts bool) {
	return hasMount(c, "/dev", "tmpfs"), hasMount(c, "/dev/pts", "")
}

// DeviceMode is the mknod mode of d: its type bits and permissions.
func DeviceMode(d *configs.Device) (uint32, error) { return deviceMode(d) }
