package launch

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// The init socket and the log socket are read with the sender's
// credentials (SO_PASSCRED, set before husk init is started): every read
// returns the bytes of one writer (the kernel never joins two senders'
// bytes when credentials are passed) with its pid, in husk's pid
// namespace. A process of the container that took a copy of an exec's
// sockets (pidfd_getfd, with CAP_SYS_PTRACE) is not one of the writers
// husk knows, and its bytes are dropped with a warning (issue 33,
// finding 4). The exec's launcher stays in the runtime's pid namespace:
// no process of the container can claim its pid, not even with
// CAP_SYS_ADMIN (the kernel takes a claimed pid only from the sender's
// own pid namespace).

// credSocket makes an AF_UNIX stream socketpair whose first end (the
// parent's) receives its senders' credentials. The parent's end is
// non-blocking, so its reads and writes wait in Go's netpoller: a goroutine
// waiting for init then holds no thread in a system call, and the runtime's
// sysmon does not hand husk's one P to another thread for each wait (with
// one P it would, after 20 µs). The child's end stays blocking for the
// launcher.
func credSocket(what string) (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s socketpair: %w", what, err)
	}
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("%s socket: set SO_PASSCRED: %w", what, err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("%s socket: set O_NONBLOCK: %w", what, err)
	}
	return os.NewFile(uintptr(fds[0]), what+"-parent"), os.NewFile(uintptr(fds[1]), what+"-child"), nil
}

// peers are the pids whose bytes are read. A pid not known yet waits
// until the set is settled (the exec's process is known, or the start
// is over): the exec's process may log before the parent read its pid.
// A nil *peers takes everyone (a container's init: see Start).
type peers struct {
	mu      sync.Mutex
	pids    map[int]bool
	settled chan struct{}
	once    sync.Once
}

func newPeers(pids ...int) *peers {
	p := &peers{pids: map[int]bool{}, settled: make(chan struct{})}
	for _, pid := range pids {
		p.pids[pid] = true
	}
	return p
}

func (p *peers) allow(pid int) {
	p.mu.Lock()
	p.pids[pid] = true
	p.mu.Unlock()
}

// settle says no more pids will be allowed.
func (p *peers) settle() { p.once.Do(func() { close(p.settled) }) }

func (p *peers) known(pid int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pids[pid]
}

// has reports whether pid is a writer, waiting for the set to settle
// when it is not known yet.
func (p *peers) has(pid int) bool {
	switch {
	case p == nil:
		return true
	case pid <= 0: // no credentials
		return false
	case p.known(pid):
		return true
	}
	<-p.settled
	return p.known(pid)
}

// credReader reads a credential-passing socket, dropping what a process
// other than peers wrote.
type credReader struct {
	*os.File
	what  string
	peers *peers
}

func (r *credReader) Read(b []byte) (int, error) {
	for {
		n, pid, err := recvWithPid(r.File, b)
		if err != nil || n == 0 {
			if err == nil {
				err = io.EOF
			}
			return 0, err
		}
		if r.peers.has(pid) {
			return n, nil
		}
		logrus.Warnf("%s: dropped %d bytes from pid %d, which is not husk init: a process holds a copy of the socket", r.what, n, pid)
	}
}

// recvWithPid reads what one sender wrote, and its pid (0 without
// credentials), waiting in the netpoller while there is nothing (f.Fd
// would make the socket blocking again).
func recvWithPid(f *os.File, b []byte) (int, int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred))
	var n, oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), b, oob, unix.MSG_CMSG_CLOEXEC)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, 0, err
	}
	return n, credPid(oob[:oobn]), nil
}

// credPid is the sender's pid in the control messages oob, 0 without.
func credPid(oob []byte) int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_CREDENTIALS {
			continue
		}
		if c, err := unix.ParseUnixCredentials(&m); err == nil {
			return int(c.Pid)
		}
	}
	return 0
}
