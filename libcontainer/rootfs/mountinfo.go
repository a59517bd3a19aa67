package rootfs

import (
	"os"

	"github.com/moby/sys/mountinfo"
)

// mountTable reads this process's mount table, keeping what filter keeps.
//
// It reads /proc/self/mountinfo where mountinfo.GetMounts reads
// /proc/thread-self/mountinfo: every thread of husk init is in the one
// mount namespace nsexec made, so the table is the same, and a
// thread-self lookup leaves dentries under /proc/<pid>/task/<tid> that the
// kernel flushes only after telling the parent the process has exited,
// which makes the parent's reap spin (see cgroup.v1Paths).
func mountTable(filter mountinfo.FilterFunc) ([]*mountinfo.Info, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return mountinfo.GetMountsFromReader(f, filter)
}
