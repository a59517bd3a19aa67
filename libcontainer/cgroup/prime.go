package cgroup

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Prime makes the kernel ready for a cgroup migration that this process
// is about to make (create, run and exec move the new init into the
// container's cgroups), in the background, while the caller goes on.
//
// Every write to a cgroup.procs file takes a global lock whose first
// writer waits for an RCU grace period (cgroup_threadgroup_rwsem's
// rcu_sync): 6 to 15 ms on a busy host, then cheap for writers that
// follow within a grace period or two. Moving this process into the
// cgroup it is already in (a no-op migration) pays that wait here, in
// parallel with reading the config, instead of on the start's critical
// path. Errors are ignored: priming is only ever an optimisation.
//
// Pure cgroup v2 hosts where the init is cloned straight into its cgroup
// (clone3 with CLONE_INTO_CGROUP) take no such lock and need no priming.
func Prime() {
	path := ownProcsFile()
	if path == "" {
		return
	}
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.WriteString(strconv.Itoa(os.Getpid()))
	}()
}

// ownProcsFile is the cgroup.procs file of this process's own cgroup in
// the first hierarchy /proc/self/cgroup names whose mount is where it
// usually is; "" if there is none.
func ownProcsFile() string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		mount := "/sys/fs/cgroup"
		if parts[0] != "0" {
			ctrl := strings.TrimPrefix(strings.Split(parts[1], ",")[0], "name=")
			if ctrl == "" {
				continue
			}
			mount = filepath.Join(mount, ctrl)
		} else if _, err := os.Stat(filepath.Join(mount, "cgroup.controllers")); err != nil {
			continue // the unified hierarchy is not at /sys/fs/cgroup (hybrid)
		}
		p := filepath.Join(mount, parts[2], "cgroup.procs")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
