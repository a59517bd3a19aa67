package libcontainer

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/proc"
	"golang.org/x/sys/unix"
)

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{
		"abc": true, "a-b_c.d+e": true, "x1": true,
		"": false, ".": false, "..": false, "a/b": false, "a b": false, "../x": false,
		"ABC_09": true, "...": true, "é": false, "a\x00": false, "a:b": false, "a\nb": false,
	} {
		if err := checkID(id); (err == nil) != ok {
			t.Errorf("checkID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}

func TestProcStat(t *testing.T) {
	state, start, err := proc.Stat(os.Getpid())
	if err != nil || start == 0 || state == 0 {
		t.Fatalf("proc.Stat(self) = %c %d %v", state, start, err)
	}
	if !proc.Alive(os.Getpid(), start) {
		t.Error("self not alive")
	}
	if proc.Alive(os.Getpid(), start+1) {
		t.Error("a different start time must count as another process")
	}
	if proc.Alive(0, 0) {
		t.Error("pid 0 alive")
	}
}

func TestStateRoundTripAndLock(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "c1")
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	_, start, _ := proc.Stat(os.Getpid())
	in := &State{ID: "c1", InitPid: os.Getpid(), InitStart: start, Bundle: "/b", Config: &configs.Config{Rootfs: "/b/rootfs"}}
	if err := saveState(dir, in); err != nil {
		t.Fatal(err)
	}
	c, err := Load(root, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if c.State.Bundle != "/b" || c.Status() != Running {
		t.Errorf("loaded %+v status %s", c.State, c.Status())
	}
	// The fifo marks a created container.
	if err := unix.Mkfifo(filepath.Join(dir, fifoName), 0o622); err != nil {
		t.Fatal(err)
	}
	if c.Status() != Created {
		t.Errorf("status %s with exec.fifo, want created", c.Status())
	}
	c.Close()
	if _, err := Load(root, "nope"); !errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "nope does not exist") {
		t.Errorf("Load(nope) = %v", err)
	}
	list, err := List(root)
	if err != nil || len(list) != 1 || list[0].ID != "c1" {
		t.Errorf("List = %+v, %v", list, err)
	}
}

func TestWritePidFileAtomic(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pid")
	if err := WritePidFile(p, 1234); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "1234" {
		t.Errorf("pid file %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
}

func TestPasswdName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	data := "root:x:0:0:root:/root:/bin/sh\n+nis::1000::::\nbad line\nalice:x:1000:1000::/home/alice:/bin/sh\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for uid, want := range map[string]string{"0": "root", "1000": "alice", "5": ""} {
		if got, ok := passwdName(path, uid); got != want || ok != (want != "") {
			t.Errorf("uid %s: %q %v, want %q", uid, got, ok, want)
		}
	}
	if _, ok := passwdName(filepath.Join(t.TempDir(), "none"), "0"); ok {
		t.Error("a missing file gave a name")
	}
}

// A partial load has everything a full one has but the config's process,
// mounts, devices and seccomp, and its state cannot be saved.
func TestLoadLifecycleIsPartialLoad(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "c1")
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	adj := 5
	cfg := &configs.Config{
		OCIVersion: "1.2.0", Rootfs: "/b/rootfs", ID: "c1", Bundle: "/b",
		Namespaces:  []configs.Namespace{{Type: configs.NEWPID}, {Type: configs.NEWNET, Path: "/run/netns/x"}},
		Process:     &configs.Process{Args: []string{"sh"}, OomScoreAdj: &adj},
		Mounts:      []*configs.Mount{{Destination: "/proc", Device: "proc"}},
		Devices:     []*configs.Device{{Path: "/dev/null"}},
		Seccomp:     &configs.Seccomp{},
		Hooks:       configs.Hooks{configs.Poststop: {{Path: "/bin/true", Args: []string{"true"}}}},
		Annotations: map[string]string{"a": "b"},
		Cgroup: &configs.Cgroup{Path: "/husk/c1", Systemd: true, ScopePrefix: "husk", Name: "c1",
			SystemdProps: map[string]string{"CPUWeight": "10"}, Resources: configs.Resources{CpuShares: 512}},
		NetDevices: map[string]configs.NetDevice{"eth1": {Name: "eth9"}},
	}
	in := &State{OCIVersion: "1.2.0", ID: "c1", InitPid: 1, InitStart: 2, Bundle: "/b", Rootfs: "/b/rootfs",
		Owner: "root", Annotations: map[string]string{"a": "b"}, Config: cfg,
		CgroupPaths: map[string]string{"freezer": "/x"}}
	if err := saveState(dir, in); err != nil {
		t.Fatal(err)
	}
	full, err := Load(root, "c1")
	if err != nil {
		t.Fatal(err)
	}
	full.Close()
	c, err := LoadLifecycle(root, "c1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := *full.State.Config
	want.Process, want.Mounts, want.Devices, want.Seccomp = nil, nil, nil, nil
	cg := *want.Cgroup
	cg.Resources = configs.Resources{}
	want.Cgroup = &cg
	if !reflect.DeepEqual(c.State.Config, &want) {
		t.Errorf("partial config\n%+v\nwant\n%+v", c.State.Config, &want)
	}
	st, wantSt := *c.State, *full.State
	st.Config, wantSt.Config, st.partial = nil, nil, false
	if !reflect.DeepEqual(st, wantSt) {
		t.Errorf("partial state\n%+v\nwant\n%+v", st, wantSt)
	}
	if err := saveState(dir, c.State); err == nil {
		t.Error("a partial state was saved")
	}
	// A value of the wrong type outside the skipped parts fails as before.
	for _, bad := range []string{`{"config":{"namespaces":5}}`, `{"config":5}`, `{"init_pid":"x"}`, `{"config":{"cgroup":{"path":1}}}`, `{"config":{"cgroup":5}}`} {
		if err := decodePartial([]byte(bad), &State{}); err == nil {
			t.Errorf("%s: decoded", bad)
		}
	}
	var s State
	if err := decodePartial([]byte(`{"config":{}}`), &s); err != nil || s.Config == nil {
		t.Errorf(`"config":{} gave %+v, %v`, s.Config, err)
	}
	s = State{}
	if err := decodePartial([]byte(`{"config":null}`), &s); err != nil || s.Config != nil {
		t.Errorf(`"config":null gave %+v, %v`, s.Config, err)
	}
}
