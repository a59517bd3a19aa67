package seccomp

import (
	"encoding/json"
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// ListenerMessage is what the runtime-spec says the seccomp listener
// receives with the notify fd: the container process state, as JSON, with
// fds naming the one fd sent. pid is the process's pid in the runtime's
// pid namespace. init builds it before Load, so that after the filter is
// in place it only has to send it.
func ListenerMessage(metadata string, pid int, state specs.State) ([]byte, error) {
	msg, err := json.Marshal(specs.ContainerProcessState{
		Version:  specs.Version,
		Fds:      []string{specs.SeccompFdName},
		Pid:      pid,
		Metadata: metadata,
		State:    state,
	})
	if err != nil {
		return nil, fmt.Errorf("linux.seccomp.listenerPath: encode the process state: %w", err)
	}
	return msg, nil
}

// SendToListener sends msg and the notify fd over conn, a unix socket
// connected to linux.seccomp.listenerPath, in one sendmsg with SCM_RIGHTS.
func SendToListener(conn, notifyFd int, msg []byte) error {
	n, err := unix.SendmsgN(conn, msg, unix.UnixRights(notifyFd), nil, 0)
	if err != nil {
		return fmt.Errorf("linux.seccomp.listenerPath: send the notify fd: %w", err)
	}
	// A stream socket may take the message in parts; the fd went with
	// the first.
	for n < len(msg) {
		m, err := unix.Write(conn, msg[n:])
		if err != nil {
			return fmt.Errorf("linux.seccomp.listenerPath: send the process state: %w", err)
		}
		n += m
	}
	return nil
}
