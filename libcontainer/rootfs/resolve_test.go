package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// These run without namespaces: open only creates files and directories.

func TestOpenStaysInsideRootfs(t *testing.T) {
	root := t.TempDir()
	host := t.TempDir() // stands for a host directory a symlink points at
	links := map[string]string{
		"abs":      host,                     // absolute: resolved as if root were "/"
		"rel":      "../../../../../" + host, // climbs above the rootfs
		"file":     filepath.Join(host, "f"),
		"dir/loop": "../dir/loop",
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()

	for _, tc := range []struct {
		path, want string
		kind       create
	}{
		{"/abs/sub", host + "/sub", makeDir},
		{"/rel/sub2", host + "/sub2", makeDir},
		{"/file", host + "/f", makeFile},
		{"/", "", mustExist},
	} {
		h, err := r.open(tc.path, tc.kind)
		if err != nil {
			t.Errorf("open %s: %v", tc.path, err)
			continue
		}
		got, err := os.Readlink(h.proc())
		h.close()
		if want := filepath.Join(root, tc.want); err != nil || got != want {
			t.Errorf("open %s resolved to %q (%v), want %q", tc.path, got, err, want)
		}
	}
	if entries, _ := os.ReadDir(host); len(entries) != 0 {
		t.Errorf("host directory changed: %v", entries)
	}
	if _, err := r.open("/dir/loop/x", makeDir); err == nil {
		t.Error("open through a symlink loop succeeded")
	}
	if _, err := r.open("/missing", mustExist); !errors.Is(err, unix.ENOENT) {
		t.Errorf("open /missing: %v, want ENOENT", err)
	}
}

// A path component that is a symlink when walked (swapped in after
// SecureJoin looked) is refused, never followed.
func TestStepRefusesSymlinks(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, tc := range []struct {
		last bool
		kind create
		want error
	}{
		{false, makeDir, unix.ENOTDIR},
		{true, makeDir, unix.ENOTDIR},
		{true, makeFile, unix.ELOOP},
		{true, mustExist, unix.ELOOP},
	} {
		fd, err := step(r.fd, "link", tc.last, tc.kind)
		if err == nil {
			closeFd(fd)
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("step(last=%v, kind=%d): %v, want %v", tc.last, tc.kind, err, tc.want)
		}
	}
}
