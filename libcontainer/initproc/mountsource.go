package initproc

import (
	"os"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
)

// askMountSource asks the parent to open mounts[i]'s source outside the
// container's user namespace (MOUNT_SOURCE) and returns the fd it passes.
func askMountSource(sock *os.File, i int) (int, error) {
	if err := bootstrap.Send(sock, bootstrap.SyncMountSource, bootstrap.PidPayload(i)); err != nil {
		return -1, err
	}
	return bootstrap.RecvMountFd(sock)
}
