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
// path inner) in every v1 hierarchy, the same map fs.NewManager computes
// when it is given none, but from one read of /proc/self/mountinfo.
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
// A relative inner is placed under husk's own cgroup in each hierarchy
// (one read of /proc/self/cgroup), as the library places it; on a hybrid
// host the library puts the unified directory at inner below the unified
// mount, and so does v1Paths.
//
// ok is false when the host's hierarchies are not all mounted directly
// under /sys/fs/cgroup, a tmpfs, or the devices hierarchy is missing, or,
// for a relative inner, a hierarchy is mounted twice or husk's own cgroup
// is outside its mount's root: the caller then lets the library compute
// the paths (and word the error).
func v1Paths(inner string, layout Layout) (map[string]string, bool) {
	var own map[string]string
	if !path.IsAbs(inner) {
		data, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			return nil, false
		}
		own = ownCgroups(string(data))
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	return v1PathsFrom(f, inner, layout == Hybrid, own)
}

// ownCgroups maps each v1 controller (and "name=X" of a named hierarchy)
// to its line's path in /proc/self/cgroup.
func ownCgroups(data string) map[string]string {
	own := map[string]string{}
	for _, line := range strings.Split(data, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[1] == "" {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			own[c] = f[2]
		}
	}
	return own
}

// v1PathsFrom is v1Paths reading the mount table from r; own is husk's
// own cgroups (ownCgroups) when inner is relative.
func v1PathsFrom(r io.Reader, inner string, hybrid bool, own map[string]string) (map[string]string, bool) {
	mounts, err := mountinfo.GetMountsFromReader(r, func(i *mountinfo.Info) (skip, stop bool) {
		return i.Mountpoint != cgroupRoot && !strings.HasPrefix(i.Mountpoint, cgroupRoot+"/"), false
	})
	if err != nil {
		return nil, false
	}
	relative := !path.IsAbs(inner)
	rootIsTmpfs := false
	mountOf := map[string]*mountinfo.Info{} // controller -> its hierarchy's mount
	mounted := map[string]int{}             // controller -> how many mounts
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
				seen := mountOf[c] != nil
				mounted[c]++
				// A hierarchy mounted twice: the library takes the mount
				// named after the controller when there is one, else the
				// first in mountinfo.
				if !seen || filepath.Base(m.Mountpoint) == strings.TrimPrefix(c, "name=") {
					mountOf[c] = m
				}
			}
		}
	}
	if !rootIsTmpfs || mountOf["devices"] == nil {
		return nil, false
	}
	paths := map[string]string{}
	for _, c := range v1Controllers {
		m := mountOf[c]
		if m == nil {
			continue
		}
		if !relative {
			paths[c] = filepath.Join(m.Mountpoint, inner)
			continue
		}
		mine, ok := own[c]
		if !ok || mounted[c] > 1 {
			// The library takes the first mount for a relative path, the
			// one named after the controller for an absolute one: not
			// worth copying both.
			return nil, false
		}
		rel, err := filepath.Rel(m.Root, mine)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, false
		}
		paths[c] = filepath.Join(m.Mountpoint, rel, inner)
	}
	if hybrid {
		paths[""] = filepath.Join(hybridMount, inner)
	}
	return paths, true
}
