package libcontainer

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// The copy is whole and sealed: no write, no resize, no new seals.
func TestSealedExeCopy(t *testing.T) {
	path, release, err := sealedExeCopy()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	want, _ := os.Stat("/proc/self/exe")
	got, err := os.Stat(path)
	if err != nil || got.Size() != want.Size() {
		t.Fatalf("copy %v size %d, want %d", err, got.Size(), want.Size())
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		_, err = f.Write([]byte("x"))
		f.Close()
	}
	if err == nil {
		t.Error("wrote to the sealed copy")
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seals, err := unix.FcntlInt(r.Fd(), unix.F_GET_SEALS, 0)
	const want4 = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if err != nil || seals&want4 != want4 {
		t.Errorf("seals %#x (%v), want %#x", seals, err, want4)
	}
}

func BenchmarkSealedExeCopy(b *testing.B) {
	for b.Loop() {
		_, release, err := sealedExeCopy()
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
}
