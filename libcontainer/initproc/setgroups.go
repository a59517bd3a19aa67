package initproc

import (
	"bytes"
	"os"

	"golang.org/x/sys/unix"
)

// setgroups sets the supplementary groups. In a user namespace whose
// setgroups is "deny" (one mapped by an unprivileged user without
// newgidmap) the call is refused even for an empty list: there no groups
// is what the process already has, and more cannot be had.
func setgroups(gids []int) error {
	if len(gids) == 0 && setgroupsDenied() {
		return nil
	}
	return unix.Setgroups(gids)
}

func setgroupsDenied() bool {
	data, err := os.ReadFile("/proc/self/setgroups")
	return err == nil && bytes.Equal(bytes.TrimSpace(data), []byte("deny"))
}
