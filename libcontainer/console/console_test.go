package console

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// openPty opens a pty pair on the host's /dev/ptmx (the launcher makes
// the container's: nsenter/pty.c, tested there).
func openPty(t *testing.T) (master, slave *os.File, path string) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		t.Fatal(errno)
	}
	n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	master, slave = os.NewFile(uintptr(m), "/dev/ptmx"), os.NewFile(s, "slave")
	t.Cleanup(func() { master.Close(); slave.Close() })
	return master, slave, "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
}

func TestSize(t *testing.T) {
	master, slave, _ := openPty(t)
	want := configs.ConsoleSize{Height: 33, Width: 101}
	if err := SetSize(master, want); err != nil {
		t.Fatal(err)
	}
	if got, err := GetSize(slave); err != nil || got != want {
		t.Errorf("size %+v, %v; want %+v", got, err, want)
	}
}

func TestSendRecvMaster(t *testing.T) {
	master, slave, _ := openPty(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	defer a.Close()
	defer b.Close()
	if err := SendMaster(a, master); err != nil {
		t.Fatal(err)
	}
	got, err := RecvMaster(b)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.Name() != "/dev/ptmx" {
		t.Errorf("name %q, want /dev/ptmx", got.Name())
	}
	// The received fd is the same master: what the slave writes shows.
	if _, err := slave.WriteString("x"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(got, buf); err != nil || buf[0] != 'x' {
		t.Errorf("read %q, %v", buf, err)
	}
}

func TestRecvMasterWithoutFd(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	defer a.Close()
	defer b.Close()
	a.WriteString("no fd")
	if _, err := RecvMaster(b); err == nil {
		t.Error("RecvMaster without an fd succeeded")
	}
}

func TestDialRefused(t *testing.T) {
	_, err := Dial(t.TempDir() + "/none.sock")
	if err == nil || !strings.Contains(err.Error(), "--console-socket") {
		t.Errorf("error %v", err)
	}
}

func itoa(fd uintptr) string { return strconv.FormatUint(uint64(fd), 10) }
