package cni

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if rec, err := LoadRecord(dir); err != nil || rec != nil {
		t.Fatalf("no record: got %v, %v", rec, err)
	}
	// Detach without a record has nothing to do.
	if err := Detach(dir, false); err != nil {
		t.Fatal(err)
	}
	want := &Record{Call: Call{
		Request:     Request{Network: "n", IfName: "eth0", Args: [][2]string{{"A", "1"}}},
		ContainerID: "c1", Netns: NetnsPath("c1"),
		Options: Options{ConfDir: "/etc/cni/net.d", BinDirs: []string{"/usr/lib/cni"}}},
		Result: []byte(`{"cniVersion":"1.0.0"}`),
	}
	if err := saveRecord(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Network != "n" || got.Netns != want.Netns || string(got.Result) != string(want.Result) || got.Args[0] != [2]string{"A", "1"} {
		t.Fatalf("got %#v", got)
	}
	if err := removeRecord(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, RecordFile)); !os.IsNotExist(err) {
		t.Fatalf("record still there: %v", err)
	}
}

func TestLoadRecordBad(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, RecordFile), []byte("{"), 0o600)
	if _, err := LoadRecord(dir); err == nil || !strings.Contains(err.Error(), RecordFile) {
		t.Fatalf("error %v, want one naming %s", err, RecordFile)
	}
}

// TestNetns makes a named netns on a temporary path and removes it: it
// must be a different network namespace, and leave no mount behind.
func TestNetns(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root (unshare, mount)")
	}
	path := filepath.Join(t.TempDir(), "ns", "husk-test")
	if err := newNetns(path); err != nil {
		t.Fatal(err)
	}
	// This thread's netns (/proc/self is the main thread's, which could
	// have been the one that made the new netns, had it not gone back).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var own, made unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &own); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(path, &made); err != nil {
		t.Fatal(err)
	}
	if own.Ino == made.Ino {
		removeNetns(path)
		t.Fatal("the netns made is husk's own")
	}
	if err := newNetns(path); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second newNetns: %v, want already exists", err)
	}
	if err := removeNetns(path); err != nil {
		t.Fatal(err)
	}
	if exists(path) {
		t.Fatal("netns file still there")
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mi), path) {
		t.Fatal("netns mount still in mountinfo")
	}
	if err := removeNetns(path); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
}
