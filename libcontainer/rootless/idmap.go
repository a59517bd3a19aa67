package rootless

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// MapWriter writes the id maps of a new user namespace for the process
// (nsexec) that made it, which cannot write them itself.
type MapWriter struct {
	UID, GID []configs.IDMap
	// Helper: go through newuidmap/newgidmap (setuid root, they check
	// the ranges against /etc/subuid and /etc/subgid), for an
	// unprivileged caller mapping more than its own id.
	Helper bool
	// DenySetgroups: write "deny" to /proc/PID/setgroups before gid_map,
	// which the kernel demands of an unprivileged writer.
	DenySetgroups bool
}

// Write writes pid's uid_map and gid_map.
func (w *MapWriter) Write(pid int) error {
	if w.Helper {
		if err := runHelper("newuidmap", "linux.uidMappings", pid, w.UID); err != nil {
			return err
		}
		return runHelper("newgidmap", "linux.gidMappings", pid, w.GID)
	}
	if w.DenySetgroups {
		path := fmt.Sprintf("/proc/%d/setgroups", pid)
		if err := os.WriteFile(path, []byte("deny"), 0); err != nil {
			return fmt.Errorf("write %s \"deny\": %w", path, err)
		}
	}
	for _, f := range []struct {
		name, field string
		maps        []configs.IDMap
	}{{"uid_map", "linux.uidMappings", w.UID}, {"gid_map", "linux.gidMappings", w.GID}} {
		path := fmt.Sprintf("/proc/%d/%s", pid, f.name)
		data := MapText(f.maps)
		if err := os.WriteFile(path, []byte(data), 0); err != nil {
			return fmt.Errorf("%s: write %s %q: %w", f.field, path, data, err)
		}
	}
	return nil
}

// MapText is maps as uid_map/gid_map text.
func MapText(maps []configs.IDMap) string {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%d %d %d\n", m.ContainerID, m.HostID, m.Size)
	}
	return b.String()
}

// helperArgs are newuidmap's arguments: the pid, then each line's three
// numbers.
func helperArgs(pid int, maps []configs.IDMap) []string {
	args := []string{strconv.Itoa(pid)}
	for _, m := range maps {
		args = append(args, strconv.FormatUint(uint64(m.ContainerID), 10),
			strconv.FormatUint(uint64(m.HostID), 10), strconv.FormatUint(uint64(m.Size), 10))
	}
	return args
}

func runHelper(name, field string, pid int, maps []configs.IDMap) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%s: mapping more than the caller's own id needs %s (Debian: apt-get install uidmap): %w", field, name, err)
	}
	var out bytes.Buffer
	cmd := exec.Command(path, helperArgs(pid, maps)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %s %s: %w: %s", field, name, strings.Join(cmd.Args[1:], " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}
