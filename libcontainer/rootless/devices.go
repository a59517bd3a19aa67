package rootless

import (
	"fmt"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// CheckDevices checks that each linux.devices entry can be given to a
// container that cannot make device nodes (no CAP_MKNOD on the host): it
// gets the host's node at the same path bound instead, which must exist
// and be the same device. stat is unix.Stat, or a fake in tests.
func CheckDevices(devs []specs.LinuxDevice, stat func(string, *unix.Stat_t) error) error {
	for i, d := range devs {
		field := fmt.Sprintf("linux.devices[%d]", i)
		want := map[string]uint32{"c": unix.S_IFCHR, "u": unix.S_IFCHR, "b": unix.S_IFBLK, "p": unix.S_IFIFO}[d.Type]
		var st unix.Stat_t
		if err := stat(d.Path, &st); err != nil {
			return fmt.Errorf("%s: %s (%s %d:%d): a rootless container cannot make device nodes, only bind the host's, and the host has none: %w",
				field, d.Path, d.Type, d.Major, d.Minor, err)
		}
		if st.Mode&unix.S_IFMT != want || (d.Type != "p" && (int64(unix.Major(st.Rdev)) != d.Major || int64(unix.Minor(st.Rdev)) != d.Minor)) {
			return fmt.Errorf("%s: %s (%s %d:%d): a rootless container cannot make device nodes, and the host's %s is another device (%d:%d)",
				field, d.Path, d.Type, d.Major, d.Minor, d.Path, unix.Major(st.Rdev), unix.Minor(st.Rdev))
		}
	}
	return nil
}
