package launch

import (
	"fmt"
	"os"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
)

// rootfsPayload is CONFIG for the container's pid 1 (pid): how it builds
// the rootfs (nsenter/build.c). The mount plan is decided here, once pid
// 1 is in its namespaces and cgroups; pid 1 only executes it.
func rootfsPayload(cfg *configs.Config, pid int, ask bool) ([]byte, error) {
	var r bootstrap.Rootfs
	if ask {
		r.Flags |= bootstrap.RootfsAskHooks
	}
	if ns, ok := cfg.Namespace(configs.NEWNET); ok && ns.Path == "" {
		r.Flags |= bootstrap.RootfsLoUp
	}
	plan, err := mountPlanFor(cfg, pid)
	if err != nil {
		return nil, err
	}
	if _, ok := cfg.Namespace(configs.NEWNS); !ok {
		r.Flags, r.Chroot = r.Flags|bootstrap.RootfsChroot, cfg.Rootfs
	} else if len(cfg.MaskPaths) > 0 {
		r.Flags |= bootstrap.RootfsDevNull
	}
	if r.Mounts, err = plan.Encode(); err != nil {
		return nil, err
	}
	if r.Hooks, err = containerHooks(cfg, pid); err != nil {
		return nil, err
	}
	return r.Encode()
}

// mountPlanFor is the mount plan of pid 1: config.json's mounts with a
// mount namespace of its own; without one, only a missing process.cwd,
// made inside the root once pid 1 has chrooted into it (as runc: the
// mounts of a container without a mount namespace are not made).
func mountPlanFor(cfg *configs.Config, pid int) (*bootstrap.MountPlan, error) {
	if _, ok := cfg.Namespace(configs.NEWNS); !ok {
		c := *cfg
		c.Mounts = nil
		steps, err := afterMounts(&c)
		if err != nil {
			return nil, err
		}
		return &bootstrap.MountPlan{Root: "/", Mounts: steps}, nil
	}
	own, err := ownCgroups(pid)
	if err != nil {
		return nil, err
	}
	return NewMountPlan(cfg, MountEnv{Cgroups: own, Pid: pid})
}

// ownCgroups is pid's /proc/PID/cgroup, by hierarchy (the cgroup mount's
// hierarchies, and the directories it binds without a cgroup namespace).
func ownCgroups(pid int) (map[string]string, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return nil, fmt.Errorf("the container's cgroups: %w", err)
	}
	defer f.Close()
	own, err := rootfs.ParseOwnCgroups(f)
	if err != nil {
		return nil, fmt.Errorf("the container's cgroups: /proc/%d/cgroup: %w", pid, err)
	}
	return own, nil
}
