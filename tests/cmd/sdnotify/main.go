// Command sdnotify sends its arguments, one a line, as one datagram to the
// unix socket $NOTIFY_SOCKET, as sd_notify(3) does: a container's way to
// tell the service manager it is ready ("sdnotify READY=1"). Static (no
// cgo), so it runs in a busybox rootfs.
//
//	sdnotify MESSAGE...
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	if err := send(os.Getenv("NOTIFY_SOCKET"), strings.Join(os.Args[1:], "\n")+"\n"); err != nil {
		fmt.Fprintln(os.Stderr, "sdnotify:", err)
		os.Exit(1)
	}
}

func send(addr, msg string) error {
	if addr == "" {
		return fmt.Errorf("NOTIFY_SOCKET is not set")
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, []byte(msg), 0, &unix.SockaddrUnix{Name: addr}); err != nil {
		return fmt.Errorf("send to %s: %w", addr, err)
	}
	return nil
}
