package rootfs

import (
	"os"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

func init() {
	const l = `system_u:object_r:container_file_t:s0:c1,c2`
	// Without SELinux the kernel refuses context= (EINVAL) and the
	// security.selinux attribute (EOPNOTSUPP): each refusal shows the
	// label reached that mount, and proc before it was not labelled.
	scenarios["labeltmpfs"] = scenario{check: wantError(`mounts[1]: error mounting "shm" to rootfs at "/dev/shm": data "mode=1777,context=\"` + l + `\"" (linux.mountLabel): mount: invalid argument`)}
	scenarios["labeldevpts"] = scenario{check: wantError(`mounts[1]: error mounting "devpts" to rootfs at "/dev/pts": data "newinstance,context=\"` + l + `\"" (linux.mountLabel): mount: invalid argument`)}
	scenarios["labelmqueue"] = scenario{check: wantError(`mounts[1]: error mounting "mqueue" to rootfs at "/dev/mqueue": linux.mountLabel "` + l + `": setxattr security.selinux: operation not supported`)}
}

// linux.mountLabel goes on tmpfs and devpts as context= and on mqueue's
// root as security.selinux, not on proc (this host has no SELinux: the
// kernel's refusal is what shows it).
func TestMountLabelReachesTheMounts(t *testing.T) {
	requireRoot(t)
	if _, err := os.Stat("/sys/fs/selinux/enforce"); err == nil {
		t.Skip("this host has SELinux: the guests' suites prove the labels")
	}
	for name, m := range map[string]*configs.Mount{
		"labeltmpfs":  {Source: "shm", Destination: "/dev/shm", Device: "tmpfs", Flags: nodev, Data: "mode=1777"},
		"labeldevpts": {Source: "devpts", Destination: "/dev/pts", Device: "devpts", Flags: unix.MS_NOSUID, Data: "newinstance"},
		"labelmqueue": {Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: nodev},
	} {
		t.Run(name, func(t *testing.T) {
			c := &configs.Config{Rootfs: newRootfs(t), Namespaces: newMountNS, MountLabel: `system_u:object_r:container_file_t:s0:c1,c2`,
				Mounts: []*configs.Mount{{Source: "proc", Destination: "/proc", Device: "proc"}, m}}
			runInChild(t, name, c, "", defaultFlags)
		})
	}
}
