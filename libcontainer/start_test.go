package libcontainer

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// TestAwaitFifoInitGoneFast: an init that writes its byte and exits at
// once, reaped at once (as containerd's shim and conmon, subreapers, do),
// has still been started. Opening the fifo releases init, so the wait must
// hold init's pidfd before that, or pidfd_open finds no such process.
func TestAwaitFifoInitGoneFast(t *testing.T) {
	for i := 0; i < 100; i++ {
		path := filepath.Join(t.TempDir(), fifoName)
		if err := unix.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		// The fake init: blocks opening the fifo for writing, then writes
		// the go-ahead byte and exits.
		cmd := exec.Command("sh", "-c", `printf 0 >"$1"`, "sh", path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		reaped := make(chan error, 1)
		go func() { reaped <- cmd.Wait() }()
		if err := awaitFifo(path, cmd.Process.Pid); err != nil {
			t.Fatalf("run %d: awaitFifo: %v", i, err)
		}
		if err := <-reaped; err != nil {
			t.Fatalf("fake init: %v", err)
		}
	}
}

// TestAwaitFifoInitDies: an init that dies without writing is reported.
func TestAwaitFifoInitDies(t *testing.T) {
	path := filepath.Join(t.TempDir(), fifoName)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `exec 3>"$1"; exit 1`, "sh", path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	err := awaitFifo(path, cmd.Process.Pid)
	if err == nil {
		t.Fatal("awaitFifo succeeded for an init that never wrote")
	}
	t.Log(err)
}

// TestAwaitFifoExecFailed: text after the go-ahead byte is why the
// process's execve failed. The container did start: one error record for
// --log, and nothing on husk's stderr (the process printed it there).
func TestAwaitFifoExecFailed(t *testing.T) {
	defer logrus.SetOutput(logrus.StandardLogger().Out)
	for _, toLog := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), fifoName)
		if err := unix.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		logrus.SetOutput(os.Stderr)
		if toLog {
			logrus.SetOutput(&log)
		}
		cmd := exec.Command("sh", "-c", `exec 3>"$1"; printf 0 >&3; printf 'exec "/x": exec format error' >&3; exit 127`, "sh", path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		err := awaitFifo(path, cmd.Process.Pid)
		_ = cmd.Wait()
		if err != nil {
			t.Errorf("awaitFifo: %v", err)
		}
		if got := strings.Count(log.String(), `level=error msg="init: exec \"/x\": exec format error"`); toLog && got != 1 {
			t.Errorf("log: %q, want one error record", log.String())
		}
	}
}

// awaitFifo opens the exec fifo and waits, as Start does.
func awaitFifo(path string, pid int) error {
	f, err := openExecFifo(path, pid)
	if err != nil {
		return err
	}
	defer f.close()
	return f.await()
}
