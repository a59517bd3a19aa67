package launch

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// runs runs the test binary through path with no test: nil when it ran.
func runs(path string) error {
	return exec.Command(path, "-test.run=^$").Run()
}

// The copy is whole and sealed: no write, no resize; it runs until it is
// sealed for exec, then never again.
func TestSealedExeCopy(t *testing.T) {
	v, err := sealedExeCopy()
	if err != nil {
		t.Fatal(err)
	}
	defer v.release()
	want, _ := os.Stat("/proc/self/exe")
	got, err := os.Stat(v.path)
	if err != nil || got.Size() != want.Size() {
		t.Fatalf("copy %v size %d, want %d", err, got.Size(), want.Size())
	}
	f, err := os.OpenFile(v.path, os.O_RDWR, 0)
	if err == nil {
		_, err = f.Write([]byte("x"))
		f.Close()
	}
	if err == nil {
		t.Error("wrote to the sealed copy")
	}
	if err := runs(v.path); err != nil {
		t.Fatalf("the copy does not run: %v", err)
	}
	if err := v.seal(); err != nil {
		t.Fatal(err)
	}
	if err := runs(v.path); !errors.Is(err, unix.EACCES) {
		t.Errorf("the sealed copy: %v, want permission denied", err)
	}
	if err := unix.Fchmod(v.fd, 0o755); err == nil {
		t.Error("chmod +x on the sealed copy worked")
	}
	seals, err := unix.FcntlInt(uintptr(v.fd), unix.F_GET_SEALS, 0)
	const all = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_EXEC
	if err != nil || seals&all != all {
		t.Errorf("seals %#x (%v), want %#x", seals, err, all)
	}
}

// The open_tree view runs until it is sealed, then never again; husk
// itself still does.
func TestBinaryViewSeal(t *testing.T) {
	v, err := huskBinaryView()
	if err != nil {
		t.Fatal(err)
	}
	defer v.release()
	if v.mem || v.fd < 0 {
		t.Skip("no open_tree view here")
	}
	if err := runs(v.path); err != nil {
		t.Fatalf("the view does not run: %v", err)
	}
	if err := v.seal(); err != nil {
		t.Fatal(err)
	}
	if err := runs(v.path); !errors.Is(err, unix.EACCES) {
		t.Errorf("the sealed view: %v, want permission denied", err)
	}
	if err := runs("/proc/self/exe"); err != nil {
		t.Errorf("the binary itself: %v", err)
	}
}

func BenchmarkSealedExeCopy(b *testing.B) {
	for b.Loop() {
		v, err := sealedExeCopy()
		if err != nil {
			b.Fatal(err)
		}
		v.release()
	}
}
