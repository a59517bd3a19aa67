// Command seccomp-listener is a seccomp notify listener for husk's tests:
// it listens on a unix socket (linux.seccomp.listenerPath), writes the
// container process state it receives to -state, and answers every
// notified syscall with -errno (0: let the syscall go on) until the
// container is gone.
//
// With -delay D it holds the first notified syscall for D, so a test can
// see what happens while a process is stopped in it. With -hold FILE it
// holds the first one until FILE exists, and creates FILE.held once it
// holds it, with the parent pid of the held process (its launcher, for
// an exec's) in it.
//
//	seccomp-listener -state FILE [-errno N] [-delay D] [-hold FILE] SOCKET
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

func main() {
	statePath := flag.String("state", "", "file to write the received state to")
	errno := flag.Int("errno", 0, "errno to answer notified syscalls with (0: continue)")
	delay := flag.Duration("delay", 0, "wait this long before answering the first notified syscall")
	flag.StringVar(&hold, "hold", "", "hold the first notified syscall until this file exists")
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
		holdFirst(req.Pid)
		resp := &libseccomp.ScmpNotifResp{ID: req.ID, Error: errno}
		if errno == 0 {
			resp.Flags = libseccomp.NotifRespFlagContinue
		}
		libseccomp.NotifRespond(libseccomp.ScmpFd(fd), resp)
	}
}

// hold is -hold: emptied once the first syscall was held.
var hold string

func holdFirst(pid uint32) {
	if hold == "" {
		return
	}
	os.WriteFile(hold+".held", []byte(parentOf(pid)), 0o644)
	for {
		if _, err := os.Stat(hold); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	hold = ""
}

// parentOf is the PPid line's value in /proc/PID/status ("" if gone).
func parentOf(pid uint32) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PPid:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
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
