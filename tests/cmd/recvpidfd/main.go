// Command recvpidfd listens on a unix socket (--pidfd-socket), receives
// one fd sent with SCM_RIGHTS and prints the name sent with it and the pid
// the fd refers to (the Pid: line of its fdinfo), e.g. "pidfd 1234".
//
//	recvpidfd SOCKET
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: recvpidfd SOCKET")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "recvpidfd:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return err
	}
	defer l.Close()
	conn, err := l.AcceptUnix()
	if err != nil {
		return err
	}
	defer conn.Close()
	name := make([]byte, 256)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(name, oob)
	if err != nil {
		return err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("no fd received: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return fmt.Errorf("no fd received: %v", err)
	}
	pid, err := fdinfoPid(fds[0])
	if err != nil {
		return err
	}
	fmt.Println(string(name[:n]), pid)
	return nil
}

// fdinfoPid is the Pid: of a pidfd's /proc/self/fdinfo entry.
func fdinfoPid(fd int) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pid:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("fd %d is not a pidfd", fd)
}
