package rootfs

// linux.mountLabel, applied where runc applies it: the context= option of
// every filesystem mounted for the container (tmpfs, /dev, devpts, the
// tmpfs of cgroup v1 and of the masked directories, any other type) but
// proc, sysfs, cgroup and bind mounts (whose data the kernel ignores:
// relabelling a bind's source is the client's :z/:Z); mqueue, which takes
// no context=, gets the label as its root's security.selinux attribute.

import (
	"fmt"
	"os"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/selinux/go-selinux/label"
	"golang.org/x/sys/unix"
)

// LabelledData is the data m's filesystem is mounted with (mountOne's,
// mountTmpfs's): with the mount label's context= but for proc, sysfs and
// mqueue, which take none (mqueue's root gets the label: LabelsRoot).
func LabelledData(m *configs.Mount, mountLabel string) string {
	switch m.Device {
	case "proc", "sysfs", "mqueue":
		return m.Data
	}
	return label.FormatMountLabel(m.Data, mountLabel)
}

// LabelsRoot reports whether the root of m's filesystem gets the mount
// label as its security.selinux attribute (mqueue).
func LabelsRoot(m *configs.Mount) bool { return m.Device == "mqueue" }

// labelled is data with r's mount label as runc formats it
// (context="LABEL" appended), or data alone when there is none.
func (r *rootDir) labelled(data string) string {
	return label.FormatMountLabel(data, r.mountLabel)
}

// mountLabelled mounts fstype with data and the mount label at target; a
// refusal names the data and linux.mountLabel, as the kernel refuses a
// context= it does not accept (a filesystem type without it, a label the
// policy lacks) with EINVAL.
func (r *rootDir) mountLabelled(source, target, fstype string, flags int, data string) error {
	data = r.labelled(data)
	err := mount(source, target, fstype, flags, data)
	if err != nil && r.mountLabel != "" {
		return fmt.Errorf("data %q (linux.mountLabel): %w", data, err)
	}
	return err
}

// labelRoot sets the mount label on the root of the filesystem mounted at
// p (runc's label.SetFileLabel on mqueue), through the mount, not a path.
func (r *rootDir) labelRoot(p string) error {
	if r.mountLabel == "" {
		return nil
	}
	return r.at(p, func(proc string) error {
		err := unix.Setxattr(proc, "security.selinux", []byte(r.mountLabel), 0)
		if err != nil {
			return fmt.Errorf("linux.mountLabel %q: %w", r.mountLabel, os.NewSyscallError("setxattr security.selinux", err))
		}
		return nil
	})
}
