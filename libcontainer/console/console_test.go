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

func openPty(t *testing.T) (master, slave *os.File, path string) {
	t.Helper()
	if _, err := os.Stat(ptmxPath); err != nil {
		t.Skipf("no %s: %v", ptmxPath, err)
	}
	master, slave, path, err := OpenPty()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	return master, slave, path
}

func TestOpenPtyIsAPair(t *testing.T) {
	master, slave, path := openPty(t)
	if !strings.HasPrefix(path, "/dev/pts/") {
		t.Errorf("slave path %q", path)
	}
	if link, _ := os.Readlink("/proc/self/fd/" + itoa(slave.Fd())); link != path {
		t.Errorf("slave fd is %q, want %q", link, path)
	}
	if err := ClearONLCR(slave); err != nil {
		t.Fatal(err)
	}
	if _, err := slave.WriteString("hi\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := master.Read(buf)
	if err != nil || string(buf[:n]) != "hi\n" {
		t.Errorf("master read %q, %v; want \"hi\\n\" (ONLCR cleared)", buf[:n], err)
	}
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
	if got.Name() != ptmxPath {
		t.Errorf("name %q, want %q", got.Name(), ptmxPath)
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
