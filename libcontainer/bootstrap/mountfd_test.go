package bootstrap

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func socketpair(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestMountFdRoundTrip: the fd arrives (close-on-exec) and names the same
// file; an error arrives as its text, with no fd.
func TestMountFdRoundTrip(t *testing.T) {
	parent, init := socketpair(t)
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := SendMountFd(parent, int(f.Fd()), nil); err != nil {
		t.Fatal(err)
	}
	fd, err := RecvMountFd(init)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Fstat(fd, &b) != nil || a.Ino != b.Ino {
		t.Errorf("the fd received is not the file sent")
	}
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("the fd received is not close-on-exec")
	}

	if err := SendMountFd(parent, -1, errors.New("mounts[3]: no such file")); err != nil {
		t.Fatal(err)
	}
	if fd, err := RecvMountFd(init); fd != -1 || err == nil || err.Error() != "mounts[3]: no such file" {
		t.Errorf("RecvMountFd = %d, %v; want the parent's error", fd, err)
	}
}

// TestRecvMountFdWrongFrame: any other frame is a protocol error.
func TestRecvMountFdWrongFrame(t *testing.T) {
	parent, init := socketpair(t)
	if err := Send(parent, SyncReady, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := RecvMountFd(init); err == nil || err.Error() != "expected MOUNT_FD from the parent, got READY" {
		t.Errorf("RecvMountFd after READY: %v", err)
	}
}
