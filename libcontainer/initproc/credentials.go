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
	if err := unix.Setgroups(gids); err != nil {
		return fmt.Errorf("process.user.additionalGids: setgroups %v: %w", u.AdditionalGids, err)
	}
	if err := unix.Setresgid(int(u.GID), int(u.GID), int(u.GID)); err != nil {
		return fmt.Errorf("process.user.gid: setresgid %d: %w", u.GID, err)
	}
	if err := unix.Setresuid(int(u.UID), int(u.UID), int(u.UID)); err != nil {
		return fmt.Errorf("process.user.uid: setresuid %d: %w", u.UID, err)
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
