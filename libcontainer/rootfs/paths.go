package rootfs

// The host's /dev/null for masking (config.json linux.maskedPaths): the
// launcher, pid 1, masks and makes paths read-only inside the new root
// after Go init's hand-over (nsenter/final.c). A file is masked with the
// container's own /dev/null when it is checked to be char 1:3, else with
// the host's, which only Go init can reach: it clones it here, before
// pivot_root, when "/" is still the host's, checks it, and hands it over
// with the root.

import (
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// devNull is a detached mount of the host's /dev/null (open_tree clone),
// made by openDevNull before pivot_root and handed over to pid 1 (see
// TakeDevNull). init builds one container, so one is enough; -1 when
// there is none.
var devNull = -1

// TakeDevNull hands over the host's /dev/null clone (-1: none): the
// caller owns it.
func TakeDevNull() int {
	fd := devNull
	devNull = -1
	return fd
}

// openDevNull clones the host's /dev/null as a detached mount, for
// masking files once the image's /dev is all there is. Called before
// pivot_root, with the host's "/" still the process's root.
func openDevNull(c *configs.Config) error {
	if len(c.MaskPaths) == 0 || devNull >= 0 {
		return nil
	}
	fd, err := openTree(unix.AT_FDCWD, "/dev/null", unix.OPEN_TREE_CLONE)
	if err != nil {
		return fmt.Errorf("maskedPaths: clone the host's /dev/null: %w", err)
	}
	if err := checkDevNull(fd); err != nil {
		closeFd(fd)
		return fmt.Errorf("maskedPaths: the host's /dev/null: %w", err)
	}
	devNull = fd
	return nil
}

// checkDevNull fails unless fd is the character device 1:3.
func checkDevNull(fd int) error {
	st, err := fstat(fd)
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
		return fmt.Errorf("not the character device 1:3 (mode %#o, device %d:%d)",
			st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	return nil
}
