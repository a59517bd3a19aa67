package launch

import (
	"io"
	"os"
	"os/exec"
	"testing"
)

// credPair is a credential-passing socketpair read through peers.
func credPair(t *testing.T, p *peers) (*credReader, *os.File) {
	t.Helper()
	parent, child, err := credSocket("test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Close(); child.Close() })
	return &credReader{File: parent, what: "test socket", peers: p}, child
}

// writeFrom starts a shell that writes text on child (its fd 3).
func writeFrom(t *testing.T, child *os.File, text string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `printf '%s' "$1" >&3`, "sh", text)
	cmd.ExtraFiles = []*os.File{child}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// A process that is not a peer (the container's, holding a copy of the
// socket) is not read; the peer's bytes around it are.
func TestCredReaderDropsStrangers(t *testing.T) {
	p := newPeers(os.Getpid())
	p.settle()
	r, child := credPair(t, p)
	if _, err := child.Write([]byte("real 1\n")); err != nil {
		t.Fatal(err)
	}
	if err := writeFrom(t, child, "forged\n").Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := child.Write([]byte("real 2\n")); err != nil {
		t.Fatal(err)
	}
	child.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "real 1\nreal 2\n" {
		t.Fatalf("read %q, want only the peer's lines", got)
	}
}

// A writer not known yet (the exec's process, before the parent read its
// pid) is read once it is allowed; the read waits for that.
func TestCredReaderWaitsForSettle(t *testing.T) {
	p := newPeers(os.Getpid())
	r, child := credPair(t, p)
	cmd := writeFrom(t, child, "late peer\n")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	done := make(chan string)
	go func() {
		got, _ := io.ReadAll(r)
		done <- string(got)
	}()
	p.allow(cmd.Process.Pid)
	p.settle()
	if got := <-done; got != "late peer\n" {
		t.Fatalf("read %q, want the allowed writer's line", got)
	}
}

// Once settled, an unknown writer is dropped, not waited for.
func TestCredReaderSettledDropsUnknown(t *testing.T) {
	p := newPeers(os.Getpid())
	p.settle()
	r, child := credPair(t, p)
	if err := writeFrom(t, child, "stranger\n").Wait(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	got, err := io.ReadAll(r)
	if err != nil || len(got) != 0 {
		t.Fatalf("read %q, %v; want nothing", got, err)
	}
}

// No credentials (pid 0) is no peer; nil peers take everyone.
func TestPeersHas(t *testing.T) {
	p := newPeers(0, 42)
	p.settle()
	if p.has(0) || !p.has(42) || p.has(43) {
		t.Fatal("peers: want only 42")
	}
	var none *peers
	if !none.has(7) {
		t.Fatal("nil peers must take every writer")
	}
	if credPid(nil) != 0 {
		t.Fatal("credPid without control messages must be 0")
	}
}
