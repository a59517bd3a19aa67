package launch

import (
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// sealedExeCopy is huskBinaryView's way where open_tree is not permitted
// (a caller without CAP_SYS_ADMIN over its mount namespace, e.g.
// rootless): a copy of the binary in a memfd, sealed against every write
// and resize before anyone runs it, so no process can write the file husk
// init runs from. It can still take F_SEAL_EXEC (seal).
func sealedExeCopy() (*binaryView, error) {
	src, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, fmt.Errorf("open /proc/self/exe: %w", err)
	}
	defer src.Close()
	fd, err := unix.MemfdCreate("husk", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create for a sealed copy of the husk binary: %w", err)
	}
	dst := os.NewFile(uintptr(fd), "memfd:husk")
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		return nil, fmt.Errorf("copy the husk binary into a memfd: %w", err)
	}
	const seals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(dst.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return nil, fmt.Errorf("seal the memfd copy of the husk binary: %w", err)
	}
	high, err := unix.FcntlInt(dst.Fd(), unix.F_DUPFD_CLOEXEC, 16)
	if err != nil {
		return nil, fmt.Errorf("dup the memfd copy of the husk binary: %w", err)
	}
	return &binaryView{path: fmt.Sprintf("/proc/self/fd/%d", high), fd: high, mem: true}, nil
}

// sealExecMemfd takes every exec bit off the memfd and seals it: with
// F_SEAL_EXEC (Linux 6.3) no one can put them back; then F_SEAL_SEAL.
func sealExecMemfd(fd int) error {
	if err := unix.Fchmod(fd, 0o444); err != nil {
		return fmt.Errorf("chmod the memfd copy of the husk binary: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_EXEC); err != nil {
		logrus.Debugf("F_SEAL_EXEC on the memfd copy of the husk binary: %v (a kernel before 6.3)", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL); err != nil {
		return fmt.Errorf("seal the memfd copy of the husk binary: %w", err)
	}
	return nil
}
