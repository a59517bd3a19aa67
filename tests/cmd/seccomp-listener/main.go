// Command seccomp-listener is a seccomp notify listener for husk's tests:
// it listens on a unix socket (linux.seccomp.listenerPath), writes the
// container process state it receives to -state, and answers every
// notified syscall with -errno (0: let the syscall go on) until the
// container is gone.
//
// With -delay D it holds the first notified syscall for D, so a test can
// see what happens while a process is stopped in it.
//
//	seccomp-listener -state FILE [-errno N] [-delay D] SOCKET
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

func main() {
	statePath := flag.String("state", "", "file to write the received state to")
	errno := flag.Int("errno", 0, "errno to answer notified syscalls with (0: continue)")
	delay := flag.Duration("delay", 0, "wait this long before answering the first notified syscall")
	flag.Parse()
	if flag.NArg() != 1 || *statePath == "" {
		fmt.Fprintln(os.Stderr, "usage: seccomp-listener -state FILE [-errno N] SOCKET")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *statePath, int32(*errno), *delay); err != nil {
		fmt.Fprintln(os.Stderr, "seccomp-listener:", err)
		os.Exit(1)
	}
}

func run(path, statePath string, errno int32, delay time.Duration) error {
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
	fd, state, err := receive(conn)
	if err != nil {
		return err
	}
	if err := os.WriteFile(statePath, state, 0o644); err != nil {
		return err
	}
	for {
		req, err := libseccomp.NotifReceive(libseccomp.ScmpFd(fd))
		if err != nil {
			return nil // the container has gone
		}
		time.Sleep(delay)
		delay = 0
		resp := &libseccomp.ScmpNotifResp{ID: req.ID, Error: errno}
		if errno == 0 {
			resp.Flags = libseccomp.NotifRespFlagContinue
		}
		libseccomp.NotifRespond(libseccomp.ScmpFd(fd), resp)
	}
}

// receive reads the state JSON and the notify fd sent with it.
func receive(conn *net.UnixConn) (int, []byte, error) {
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return -1, nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, nil, fmt.Errorf("no fd with the state: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, nil, fmt.Errorf("no fd with the state: %v", err)
	}
	var st specs.ContainerProcessState
	if err := json.Unmarshal(buf[:n], &st); err != nil {
		return -1, nil, fmt.Errorf("state %q: %w", buf[:n], err)
	}
	if len(st.Fds) != 1 || st.Fds[0] != specs.SeccompFdName {
		return -1, nil, errors.New("state.fds does not name the seccomp fd")
	}
	return fds[0], buf[:n], nil
}
