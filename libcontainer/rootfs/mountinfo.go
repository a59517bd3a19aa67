package rootfs

import (
	"os"
	"strconv"

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

// Mounts is a mount table read once (ReadMounts), which each decision
// that looks at it filters: the parent reads its own once to plan the
// launcher's mounts (libcontainer/launch/mountplan.go).
type Mounts []*mountinfo.Info

// ReadMounts reads this process's whole mount table.
func ReadMounts() (Mounts, error) { return mountTable(nil) }

// ReadMountsOf reads process pid's whole mount table (the launcher's, in
// a mount namespace it joined).
func ReadMountsOf(pid int) (Mounts, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return mountinfo.GetMountsFromReader(f, nil)
}

// filter keeps what f keeps, as mountinfo.GetMountsFromReader does.
func (t Mounts) filter(f mountinfo.FilterFunc) []*mountinfo.Info {
	var out []*mountinfo.Info
	for _, m := range t {
		skip, stop := f(m)
		if !skip {
			out = append(out, m)
		}
		if stop {
			break
		}
	}
	return out
}
