// Package rootless holds what changes when husk runs as a user without
// root on the host (a non-zero euid, or root of a user namespace that is
// not the host's): where state lives, how the container's id maps get
// written (directly for the caller's own id, through newuidmap/newgidmap
// for ranges from /etc/subuid and /etc/subgid), whether the container gets
// cgroups, and which device nodes can be bound from the host. Every error
// names the config.json field it is about.
package rootless

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mode is the --rootless flag: "auto" (decide from the caller), "true"
// or "false", as runc's.
type Mode string

// ParseMode checks a --rootless value.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return "auto", nil
	case "true", "1":
		return "true", nil
	case "false", "0":
		return "false", nil
	}
	return "", fmt.Errorf("--rootless: unknown %q (auto, true or false)", s)
}

// Caller is who runs husk.
type Caller struct {
	EUID, EGID int
	// InUserNS: the caller is not in the host's (initial) user namespace.
	InUserNS bool
}

// Self is the current process as a Caller.
func Self() Caller {
	return Caller{EUID: os.Geteuid(), EGID: os.Getegid(), InUserNS: inUserNS()}
}

// Unprivileged reports whether c lacks root on the host: a non-zero euid,
// or any euid inside a user namespace.
func (c Caller) Unprivileged() bool { return c.EUID != 0 || c.InUserNS }

// Cgroups reports whether the container's cgroups are handled the
// rootless way (made only where writable, skipped otherwise): "auto"
// decides so for an unprivileged caller.
func (m Mode) Cgroups(c Caller) bool {
	switch m {
	case "true":
		return true
	case "false":
		return false
	}
	return c.Unprivileged()
}

// DefaultStateRoot is the --root of a caller that gave none: root of the
// host keeps /run/husk; anyone else $XDG_RUNTIME_DIR/husk (root inside a
// user namespace too, unless $USER says it is the real root), as runc.
func DefaultStateRoot(c Caller, getenv func(string) string) string {
	xdg := getenv("XDG_RUNTIME_DIR")
	switch {
	case xdg == "":
	case c.EUID != 0:
		return filepath.Join(xdg, "husk")
	case c.InUserNS && getenv("USER") != "root":
		return filepath.Join(xdg, "husk")
	}
	return "/run/husk"
}

// inUserNS reads /proc/self/uid_map: the initial user namespace maps the
// whole id space, 0 to 0.
func inUserNS() bool {
	data, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	return !isInitialMap(string(data))
}

func isInitialMap(uidMap string) bool {
	f := strings.Fields(uidMap)
	return len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295"
}
