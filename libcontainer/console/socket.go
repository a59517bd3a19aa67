package console

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Dial connects to the console socket at path (--console-socket).
func Dial(path string) (*os.File, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("--console-socket %s: %w", path, err)
	}
	defer conn.Close()
	f, err := conn.File() // a dup, blocking, close-on-exec
	if err != nil {
		return nil, fmt.Errorf("--console-socket %s: %w", path, err)
	}
	return f, nil
}

// SendMaster sends master over sock with SCM_RIGHTS; the message is the
// master's name, as runc sends it.
func SendMaster(sock, master *os.File) error {
	rights := unix.UnixRights(int(master.Fd()))
	if err := unix.Sendmsg(int(sock.Fd()), []byte(master.Name()), rights, nil, 0); err != nil {
		return fmt.Errorf("send the pty master over the console socket: %w", err)
	}
	return nil
}

// RecvMaster receives one fd sent with SCM_RIGHTS over sock.
func RecvMaster(sock *os.File) (*os.File, error) {
	name := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), name, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("receive the pty master: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("receive the pty master: %w", err)
	}
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds[1:] {
			unix.Close(fd)
		}
		if len(fds) > 0 {
			return os.NewFile(uintptr(fds[0]), string(name[:n])), nil
		}
	}
	return nil, errors.New("receive the pty master: no fd came with the message")
}
