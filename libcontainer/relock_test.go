package libcontainer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Relock keeps a container whose state is still its own, and calls one
// deleted, or deleted and made again under its id, gone.
func TestRelock(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "c1")
	mk := func(pid int, start uint64) *Container {
		t.Helper()
		if err := os.MkdirAll(dir, 0o711); err != nil {
			t.Fatal(err)
		}
		s := &State{ID: "c1", InitPid: pid, InitStart: start}
		if err := saveState(dir, s); err != nil {
			t.Fatal(err)
		}
		return &Container{ID: "c1", dir: dir, State: s}
	}
	c := mk(10, 20)
	if err := c.Relock(); err != nil || c.lock == nil {
		t.Fatalf("own state: %v, lock %v", err, c.lock)
	}
	c.Close()

	mk(11, 20) // made again: another init
	if err := c.Relock(); !errors.Is(err, ErrNotExist) || c.lock != nil {
		t.Errorf("made again: %v, lock %v", err, c.lock)
	}
	mk(10, 21) // the same pid, another process
	if err := c.Relock(); !errors.Is(err, ErrNotExist) {
		t.Errorf("pid reused: %v", err)
	}
	os.RemoveAll(dir)
	if err := c.Relock(); !errors.Is(err, ErrNotExist) {
		t.Errorf("deleted: %v", err)
	}
	mk(10, 20)
	os.Remove(filepath.Join(dir, stateFile))
	if err := c.Relock(); !errors.Is(err, ErrNotExist) {
		t.Errorf("no state.json: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, stateFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Relock(); err == nil || errors.Is(err, ErrNotExist) {
		t.Errorf("damaged state.json: %v", err)
	}
}
