package nsenter

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/console"
)

// The launcher's pty (pty.c), as the build calls it: the master goes over
// the console socket named /dev/ptmx; the slave is sized, owned by the
// process's uid, and without ONLCR.
func TestOpenPty(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown of the pty needs root")
	}
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skip("no /dev/ptmx:", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	defer a.Close()
	defer b.Close()
	fd, err := OpenPty(int(a.Fd()), true, 33, 101, 65534)
	if err != nil {
		t.Fatal(err)
	}
	slave := os.NewFile(uintptr(fd), "slave")
	defer slave.Close()
	master, err := console.RecvMaster(b)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	if master.Name() != "/dev/ptmx" {
		t.Errorf("master sent as %q", master.Name())
	}
	if got, err := console.GetSize(slave); err != nil || got != (configs.ConsoleSize{Height: 33, Width: 101}) {
		t.Errorf("size %+v, %v", got, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Uid != 65534 {
		t.Errorf("slave owner %d, %v; want 65534", st.Uid, err)
	}
	if _, err := slave.WriteString("hi\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := master.Read(buf); err != nil || string(buf[:n]) != "hi\n" {
		t.Errorf("master read %q, %v; want \"hi\\n\" (ONLCR cleared)", buf[:n], err)
	}
	// A console socket that is no socket: the error says what failed.
	if _, err := OpenPty(int(slave.Fd()), false, 0, 0, 0); err == nil || !strings.Contains(err.Error(), "send the pty master over the console socket") {
		t.Errorf("no socket: %v", err)
	}
}
