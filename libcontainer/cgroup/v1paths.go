package cgroup

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// v1Controllers are the hierarchies fs.NewManager gives a directory when
// the host mounts them (the library's own list; "" is added on a hybrid
// host).
var v1Controllers = []string{
	"cpuset", "devices", "memory", "cpu", "cpuacct", "pids", "blkio",
	"hugetlb", "net_cls", "net_prio", "perf_event", "freezer", "rdma",
	"name=systemd", "misc",
}

// v1Paths computes the directories of a new container's cgroups (at the
// absolute path inner) in every v1 hierarchy, the same map fs.NewManager
// computes when it is given none, but from one read of
// /proc/self/mountinfo.
//
// The library's way costs a securejoin, two lstats and a statfs per
// controller, and when the host lacks one (hugetlb, rdma, misc on many
// hosts) a read of /proc/thread-self/mountinfo. That lookup, made
// from whichever thread the goroutine is on, leaves dentries under
// /proc/<pid>/task/<tid>. When husk exits, the kernel flushes a thread's
// dentries only after it has told husk's parent that husk is gone, so the
// parent's reap of husk spins until the flush is done: about a
// millisecond of CPU a reap, and 6% of all CPU, with 50 containers
// starting at once. husk's threads share one mount namespace, so
// /proc/self/mountinfo is the same table.
//
// ok is false when the host's hierarchies are not all mounted directly
// under /sys/fs/cgroup, a tmpfs, or the devices hierarchy is missing, or
// inner is relative (the library places that under husk's own cgroup):
// the caller then lets the library compute the paths (and word the
// error).
func v1Paths(inner string, layout Layout) (map[string]string, bool) {
	if !path.IsAbs(inner) {
		return nil, false
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	return v1PathsFrom(f, inner, layout == Hybrid)
}

// v1PathsFrom is v1Paths reading the mount table from r.
func v1PathsFrom(r io.Reader, inner string, hybrid bool) (map[string]string, bool) {
	mounts, err := mountinfo.GetMountsFromReader(r, func(i *mountinfo.Info) (skip, stop bool) {
		return i.Mountpoint != cgroupRoot && !strings.HasPrefix(i.Mountpoint, cgroupRoot+"/"), false
	})
	if err != nil {
		return nil, false
	}
	rootIsTmpfs := false
	mountOf := map[string]string{} // controller -> its hierarchy's mount point
	for _, m := range mounts {
		switch {
		case m.Mountpoint == cgroupRoot:
			rootIsTmpfs = m.FSType == "tmpfs"
		case m.FSType != "cgroup":
			// cgroup2 on a hybrid host, or anything else mounted there.
		case filepath.Dir(m.Mountpoint) != cgroupRoot:
			return nil, false
		default:
			for _, c := range strings.Split(m.VFSOptions, ",") {
				// A hierarchy mounted twice: the library takes the mount
				// named after the controller when there is one, else the
				// first in mountinfo.
				if _, seen := mountOf[c]; !seen || filepath.Base(m.Mountpoint) == strings.TrimPrefix(c, "name=") {
					mountOf[c] = m.Mountpoint
				}
			}
		}
	}
	if !rootIsTmpfs || mountOf["devices"] == "" {
		return nil, false
	}
	paths := map[string]string{}
	for _, c := range v1Controllers {
		if mnt, ok := mountOf[c]; ok {
			paths[c] = filepath.Join(mnt, inner)
		}
	}
	if hybrid {
		paths[""] = filepath.Join(hybridMount, inner)
	}
	return paths, true
}
