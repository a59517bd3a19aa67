package initproc

import (
	"fmt"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/caps"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// setupCredentials drops init's root powers to the process's: bounding
// set first (needs CAP_SETPCAP), then groups and ids with capabilities
// kept across the uid change, then the five capability sets, then
// no_new_privs.
func setupCredentials(p *configs.Process) error {
	var bounding []string
	if p.Capabilities != nil {
		bounding = p.Capabilities.Bounding
	}
	if err := caps.DropBounding(bounding); err != nil {
		return fmt.Errorf("process.capabilities.bounding: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_KEEPCAPS): %w", err)
	}
	u := p.User
	gids := make([]int, len(u.AdditionalGids))
	for i, g := range u.AdditionalGids {
		gids[i] = int(g)
	}
	// Each of these three is a signal and a syscall on every thread of
	// init (the C library keeps a process's threads' ids alike): a call
	// that would change nothing (a root process, as most are) is left out.
	if !haveGroups(gids) {
		if err := setgroups(gids); err != nil {
			return fmt.Errorf("process.user.additionalGids: setgroups %v: %w", u.AdditionalGids, err)
		}
	}
	if !haveIDs(unix.Getresgid, int(u.GID)) {
		if err := unix.Setresgid(int(u.GID), int(u.GID), int(u.GID)); err != nil {
			return fmt.Errorf("process.user.gid: setresgid %d: %w", u.GID, err)
		}
	}
	if !haveIDs(unix.Getresuid, int(u.UID)) {
		if err := unix.Setresuid(int(u.UID), int(u.UID), int(u.UID)); err != nil {
			return fmt.Errorf("process.user.uid: setresuid %d: %w", u.UID, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_KEEPCAPS, 0): %w", err)
	}
	skipped, err := caps.Apply(p.Capabilities)
	if err != nil {
		return fmt.Errorf("process.capabilities: %w", err)
	}
	if len(skipped) > 0 {
		logrus.Warnf("process.capabilities: this kernel does not know %s; skipped", strings.Join(skipped, ", "))
	}
	if p.NoNewPrivileges {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("process.noNewPrivileges: prctl: %w", err)
		}
	}
	return nil
}

// haveIDs reports whether get (getresuid or getresgid) says the real,
// effective and saved ids are all id already: setting them again would
// change nothing, not even the capabilities (they change only when the
// ids leave or reach 0).
func haveIDs(get func() (int, int, int), id int) bool {
	r, e, s := get()
	return r == id && e == id && s == id
}

// haveGroups reports whether the supplementary groups are gids already,
// in any order.
func haveGroups(gids []int) bool {
	cur, err := unix.Getgroups()
	if err != nil || len(cur) != len(gids) {
		return false
	}
	want := map[int]int{}
	for _, g := range gids {
		want[g]++
	}
	for _, g := range cur {
		if want[g] == 0 {
			return false
		}
		want[g]--
	}
	return true
}
