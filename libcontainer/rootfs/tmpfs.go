package rootfs

import (
	"fmt"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs. Without mode= it takes the mode of the
// directory it covers (setuid, setgid and sticky bits included), as runc
// does; with tmpcopyup it starts with a copy of that directory.
func mountTmpfs(r *rootDir, m *configs.Mount) error {
	data := m.Data
	covered, err := r.open(m.Destination, mustExist)
	if err == nil && !hasOption(data, "mode") {
		if st, err := fstat(covered.fd); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			data = joinOptions(data, fmt.Sprintf("mode=%o", st.Mode&0o7777))
		}
	}
	if err != nil {
		if covered, err = r.open(m.Destination, makeDir); err != nil {
			return err
		}
	}
	defer covered.close()
	flags := m.Flags
	if m.CopyUp {
		flags &^= unix.MS_RDONLY // filled first, then made read-only
	}
	if err := r.mountLabelled(mountSource(m), covered.proc(), "tmpfs", flags, data); err != nil {
		return err
	}
	if err := r.coverRoot(m.Destination); err != nil {
		return err
	}
	if m.CopyUp {
		if err := r.at(m.Destination, func(p string) error { return copyUp(covered.fd, p) }); err != nil {
			return fmt.Errorf("tmpcopyup: %w", err)
		}
		if m.Flags&unix.MS_RDONLY != 0 {
			if err := r.at(m.Destination, func(p string) error { return remountBind(p, unix.MS_RDONLY, 0) }); err != nil {
				return err
			}
		}
	}
	return finishMount(r, m)
}

// hasOption reports whether the comma-separated data sets key=.
func hasOption(data, key string) bool {
	for _, o := range strings.Split(data, ",") {
		if strings.HasPrefix(o, key+"=") {
			return true
		}
	}
	return false
}

func joinOptions(data, o string) string {
	if data == "" {
		return o
	}
	return data + "," + o
}
