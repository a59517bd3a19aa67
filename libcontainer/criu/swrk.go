// Package criu drives CRIU through its RPC: a `criu swrk` process, a
// SOCK_SEQPACKET socket to it, one request, the notifications CRIU sends
// while it works (answered one by one), and its answer. The messages are
// rpc.proto's, written and read by messages.go.
//
// The exchange, as CRIU's RPC defines it:
//
//	husk                         criu swrk
//	REQUEST (dump, pre-dump,  →
//	restore, feature check)
//	                          ←  NOTIFY script (pid; a pty master in
//	                             SCM_RIGHTS for orphan-pts-master)
//	NOTIFY success            →
//	                             … more notifications …
//	                          ←  the answer: the request's type, success
//	                             or not, CRIU's errno and message
//
// A message is one datagram, at most maxMessage bytes.
package criu

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// maxMessage bounds one message from CRIU; a larger one is an error,
// never truncated silently.
const maxMessage = 64 << 10

// Swrk is a running `criu swrk`.
type Swrk struct {
	cmd  *exec.Cmd
	conn *net.UnixConn
}

// Start starts `binary swrk 3` with stdio as its fds 0-2 (nil:
// /dev/null), the RPC socket as fd 3 and extra as fds 4, 5, …
func Start(binary string, stdio [3]*os.File, extra []*os.File) (*Swrk, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("criu: socketpair: %w", err)
	}
	client := os.NewFile(uintptr(fds[0]), "criu-client")
	server := os.NewFile(uintptr(fds[1]), "criu-server")
	defer server.Close()
	fc, err := net.FileConn(client)
	client.Close()
	if err != nil {
		server.Close()
		return nil, fmt.Errorf("criu: socket: %w", err)
	}
	cmd := exec.Command(binary, "swrk", "3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio[0], stdio[1], stdio[2]
	cmd.ExtraFiles = append([]*os.File{server}, extra...)
	if err := cmd.Start(); err != nil {
		fc.Close()
		return nil, fmt.Errorf("criu: start %s: %w", binary, err)
	}
	return &Swrk{cmd: cmd, conn: fc.(*net.UnixConn)}, nil
}

// Pid is the pid of the criu process.
func (s *Swrk) Pid() int { return s.cmd.Process.Pid }

// Notify handles CRIU's notification script (pid is the notification's
// pid; fds the descriptors that came with it, which the handler owns).
// An error fails the request: CRIU is told, and undoes what it did.
type Notify func(script string, pid int, fds []int) error

// Do sends one request and answers its notifications until CRIU's answer.
func (s *Swrk) Do(t ReqType, opts *Opts, notify Notify) (*Resp, error) {
	if opts != nil {
		opts.NotifyScripts = Bool(notify != nil)
	}
	req := &Req{Type: t, Opts: opts}
	if err := s.send(req); err != nil {
		return nil, err
	}
	buf := make([]byte, maxMessage+1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := s.conn.ReadMsgUnix(buf, oob)
		if err != nil {
			return nil, fmt.Errorf("criu: read answer: %w", err)
		}
		if n == 0 {
			return nil, errors.New("criu: exited without an answer")
		}
		if n > maxMessage {
			return nil, fmt.Errorf("criu: answer longer than %d bytes", maxMessage)
		}
		fds, err := passedFds(oob[:oobn])
		if err != nil {
			return nil, err
		}
		resp, err := UnmarshalResp(buf[:n])
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("criu: decode answer: %w", err)
		}
		if resp.Type != ReqNotify {
			closeAll(fds)
			return resp, answerError(t, resp)
		}
		var script string
		var pid int32
		if resp.Notify != nil {
			script, pid = resp.Notify.Script, resp.Notify.Pid
		}
		ok := true
		if notify != nil {
			if err = notify(script, int(pid), fds); err != nil {
				ok = false
			}
		} else {
			closeAll(fds)
		}
		ack := &Req{Type: ReqNotify, NotifySuccess: Bool(ok)}
		if serr := s.send(ack); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			return nil, fmt.Errorf("criu notification %s: %w", script, err)
		}
	}
}

// answerError is the error of an answer to a request of type t, nil when
// it succeeded.
func answerError(t ReqType, resp *Resp) error {
	if resp.Type != t {
		return fmt.Errorf("criu: answered %s to a %s request", resp.Type, t)
	}
	if resp.Success {
		return nil
	}
	msg := resp.CrErrmsg
	if msg == "" {
		msg = "no message"
	}
	return fmt.Errorf("criu %s failed: %s (errno %d)", kindName(t), msg, resp.CrErrno)
}

// kindName is a request type as a user reads it.
func kindName(t ReqType) string {
	switch t {
	case ReqDump:
		return "dump"
	case ReqPreDump:
		return "pre-dump"
	case ReqRestore:
		return "restore"
	}
	return t.String()
}

func (s *Swrk) send(req *Req) error {
	if _, err := s.conn.Write(req.Marshal()); err != nil {
		return fmt.Errorf("criu: send request: %w", err)
	}
	return nil
}

// passedFds are the descriptors of an SCM_RIGHTS message.
func passedFds(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("criu: control message: %w", err)
	}
	var fds []int
	for i := range msgs {
		f, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("criu: control message: %w", err)
		}
		fds = append(fds, f...)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// Close ends the exchange and waits for criu. CRIU that exits non-zero
// after a pre-dump is no error: it waits for a next request, and exits
// when the socket closes.
func (s *Swrk) Close(preDump bool) error {
	s.conn.CloseWrite()
	err := s.cmd.Wait()
	s.conn.Close()
	if err != nil && !preDump {
		return fmt.Errorf("criu: %w", err)
	}
	return nil
}

// Kill ends a criu that failed mid-request.
func (s *Swrk) Kill() {
	s.conn.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
}
