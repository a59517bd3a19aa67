package bootstrap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// SendMountFd answers MOUNT_SOURCE: the source's fd, or, when err is not
// nil, its text and no fd.
func SendMountFd(sock *os.File, fd int, err error) error {
	if err != nil {
		return Send(sock, SyncMountFd, []byte(err.Error()))
	}
	var hdr [8]byte
	binary.NativeEndian.PutUint32(hdr[0:4], uint32(SyncMountFd))
	// Through the socket's raw conn: sock.Fd would make a socket that waits
	// in the netpoller blocking again.
	rc, err := sock.SyscallConn()
	if err != nil {
		return fmt.Errorf("send %s: %w", SyncMountFd, err)
	}
	var serr error
	err = rc.Write(func(s uintptr) bool {
		serr = unix.Sendmsg(int(s), hdr[:], unix.UnixRights(fd), nil, 0)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("send %s: %w", SyncMountFd, err)
	}
	return nil
}

// RecvMountFd reads the answer to MOUNT_SOURCE: the fd (close-on-exec),
// or the parent's error.
func RecvMountFd(sock *os.File) (int, error) {
	var hdr [8]byte
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), hdr[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("read %s: %w", SyncMountFd, err)
	}
	if n != len(hdr) {
		return -1, fmt.Errorf("read %s: short header of %d bytes", SyncMountFd, n)
	}
	if t := SyncType(binary.NativeEndian.Uint32(hdr[0:4])); t != SyncMountFd {
		return -1, fmt.Errorf("expected %s from the parent, got %s", SyncMountFd, t)
	}
	if size := binary.NativeEndian.Uint32(hdr[4:8]); size > 0 {
		if size > maxPayload {
			return -1, fmt.Errorf("%s: payload of %d bytes is too large", SyncMountFd, size)
		}
		msg := make([]byte, size)
		if _, err := io.ReadFull(sock, msg); err != nil {
			return -1, fmt.Errorf("read %s payload: %w", SyncMountFd, err)
		}
		return -1, errors.New(string(msg))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("%s: no fd passed", SyncMountFd)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("%s: want one fd, got %d", SyncMountFd, len(fds))
	}
	return fds[0], nil
}
