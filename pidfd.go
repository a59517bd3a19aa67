package main

import (
	"fmt"
	"net"
	"os"

	"github.com/husk-runtime/husk/libcontainer/console"
	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
)

// pidfdSocketFlag is --pidfd-socket of create, run and exec, as in runc:
// a unix socket that receives a pidfd of the container's init (or of the
// exec'd process) with SCM_RIGHTS, named "pidfd".
var pidfdSocketFlag = &cli.StringFlag{Name: "pidfd-socket", Usage: "unix socket that receives a pidfd of the process"}

// pidfdSocket is a connection to --pidfd-socket, made before the process
// so that a socket nobody listens on fails early, with nothing to undo.
type pidfdSocket struct{ conn *net.UnixConn }

// dialPidfdSocket connects to --pidfd-socket, if given (nil otherwise).
func dialPidfdSocket(cmd *cli.Command) (*pidfdSocket, error) {
	path := cmd.String("pidfd-socket")
	if path == "" {
		return nil, nil
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("--pidfd-socket %s: %w", path, err)
	}
	return &pidfdSocket{conn: conn}, nil
}

// send sends a pidfd of pid and closes the connection.
func (s *pidfdSocket) send(pid int) error {
	if s == nil {
		return nil
	}
	defer s.close()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("--pidfd-socket: pidfd_open %d: %w", pid, err)
	}
	pidfd := os.NewFile(uintptr(fd), "pidfd")
	defer pidfd.Close()
	sock, err := s.conn.File()
	if err != nil {
		return fmt.Errorf("--pidfd-socket: %w", err)
	}
	defer sock.Close()
	if err := console.SendMaster(sock, pidfd); err != nil {
		return fmt.Errorf("--pidfd-socket: send the pidfd of %d: %w", pid, err)
	}
	return nil
}

func (s *pidfdSocket) close() {
	if s != nil {
		s.conn.Close()
	}
}
