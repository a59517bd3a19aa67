package launch

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openFifoPath opens the exec fifo as an O_PATH fd for init, which reopens
// it for writing through /proc/self/fd once the container is built.
func openFifoPath(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
