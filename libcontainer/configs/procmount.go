package configs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// procFiles are the places inside /proc a mount may cover, as runc
// allows (rootfs_linux.go, checkProcMount): the files lxcfs emulates.
var procFiles = []string{
	"/proc/cpuinfo",
	"/proc/diskstats",
	"/proc/meminfo",
	"/proc/stat",
	"/proc/swaps",
	"/proc/uptime",
	"/proc/loadavg",
	"/proc/slabinfo",
	"/proc/net/dev",
	"/proc/sys/kernel/ns_last_pid",
	"/proc/sys/crypto/fips_enabled",
}

// CheckProcMount refuses a mount on dest, a container path resolved
// inside the rootfs, that lies inside /proc, as runc does: /proc itself
// takes a proc mount or a bind (of a procfs: the caller checks the
// source), under it only procFiles. A volume on /proc/1 or /proc/self/fd
// would change what the container's pid 1, or anything that trusts the
// container's /proc, reads there.
func CheckProcMount(dest, fstype string, bind bool) error {
	dest = filepath.Clean("/" + dest)
	rel, ok := strings.CutPrefix(dest, "/proc")
	switch {
	case !ok || (rel != "" && !strings.HasPrefix(rel, "/")):
		return nil // outside /proc: "/procfoo" too
	case rel == "":
		if fstype == "proc" || bind {
			return nil
		}
		return fmt.Errorf("%q cannot be mounted because it is not of type proc", dest)
	case slices.Contains(procFiles, dest):
		return nil
	}
	return fmt.Errorf("%q cannot be mounted because it is inside /proc", dest)
}
