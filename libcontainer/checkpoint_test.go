package libcontainer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// runc's keys: images runc made restore with husk, and the other way.
func TestExternalKey(t *testing.T) {
	if k := externalKey(configs.NEWNET); k != "extRootNetNS" {
		t.Errorf("net: %q", k)
	}
	if k := externalKey(configs.NEWPID); k != "extRootPidNS" {
		t.Errorf("pid: %q", k)
	}
}

func TestParseCgroupRoots(t *testing.T) {
	roots := parseCgroupRoots("12:cpu,cpuacct:/husk/c1\n1:name=systemd:/husk/c1\n0::/husk/c1\n")
	var got []string
	for _, r := range roots {
		got = append(got, r.Ctrl+"="+r.Path)
	}
	want := []string{"cpu=/husk/c1", "cpuacct=/husk/c1", "name=systemd=/husk/c1", "=/husk/c1"}
	if len(got) != len(want) {
		t.Fatalf("roots %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("root %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// A process in husk's own namespaces adds none; the config's are kept.
func TestWithRestoredNamespaces(t *testing.T) {
	cfg := &configs.Config{Namespaces: []configs.Namespace{{Type: configs.NEWNET, Path: "/run/netns/x"}}}
	out := withRestoredNamespaces(cfg, os.Getpid())
	if len(out.Namespaces) != 1 || out.Namespaces[0].Path != "/run/netns/x" {
		t.Errorf("namespaces %+v", out.Namespaces)
	}
	if &out.Namespaces[0] == &cfg.Namespaces[0] {
		t.Error("the config's namespaces were not copied")
	}
}

// externalMounts names binds, devices and masked files (not dirs).
func TestDumpExternalMounts(t *testing.T) {
	cfg := &configs.Config{
		Mounts:    []*configs.Mount{{Source: "/src", Destination: "/data", Device: "bind"}, {Destination: "/tmp", Device: "tmpfs"}},
		Devices:   []*configs.Device{{Path: "/dev/fuse"}},
		MaskPaths: []string{"/proc/version", "/proc/sys", "/nonexistent"},
	}
	got := map[string]string{}
	for _, m := range externalMounts(cfg, os.Getpid()) {
		got[m.Key] = m.Val
	}
	want := map[string]string{"/data": "/data", "/dev/fuse": "/dev/fuse", "/proc/version": "/dev/null"}
	if len(got) != len(want) {
		t.Errorf("external mounts %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	back := map[string]string{}
	for _, m := range externalMounts(cfg, 0) {
		back[m.Key] = m.Val
	}
	if back["/data"] != "/src" || back["/dev/null"] != "/dev/null" {
		t.Errorf("restore's external mounts %v", back)
	}
}

// descriptors.json comes with the images: more than fds 0-2 is refused.
func TestParseDescriptors(t *testing.T) {
	if fds, err := parseDescriptors("d.json", []byte(`["pipe:[1]","/dev/null","/dev/pts/0"]`)); err != nil || len(fds) != 3 {
		t.Errorf("three fds: %v %v", fds, err)
	}
	for _, bad := range []string{`["a","b","c","pipe:[9]"]`, `{"0":"x"}`, `nonsense`} {
		if _, err := parseDescriptors("d.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), "d.json") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// A restore killed with the rootfs bound on DIR/criu-root: removing the
// state dir unmounts it and leaves the rootfs alone.
func TestRemoveStateDirKeepsTheRootfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind mount")
	}
	rootfs, dir := t.TempDir(), filepath.Join(t.TempDir(), "c1")
	keep := filepath.Join(rootfs, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, criuRootName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(rootfs, filepath.Join(dir, criuRootName), "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	if err := removeStateDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the rootfs lost its file: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state dir still there: %v", err)
	}
}
