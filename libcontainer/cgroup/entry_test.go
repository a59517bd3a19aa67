package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

func TestEntryNeedsMove(t *testing.T) {
	dir, tasks := os.Stdin, []*os.File{os.Stdin}
	for _, c := range []struct {
		name string
		e    *Entry
		born bool
		want bool
	}{
		{"no entry (systemd driver)", nil, false, true},
		{"v2, born in the directory", &Entry{Dir: dir}, true, false},
		{"v2, clone3 refused: plain start", &Entry{Dir: dir}, false, true},
		{"v1: nsexec writes the tasks files", &Entry{Tasks: tasks}, false, false},
		{"hybrid, born in the unified directory", &Entry{Dir: dir, Tasks: tasks}, true, false},
		{"hybrid, clone3 refused", &Entry{Dir: dir, Tasks: tasks}, false, true},
		{"nothing to enter", &Entry{}, false, true},
	} {
		if got := c.e.NeedsMove(c.born); got != c.want {
			t.Errorf("%s: NeedsMove(%v) = %v, want %v", c.name, c.born, got, c.want)
		}
	}
}

// TestHostEntry: on this host's layout, Entry opens one tasks file per v1
// directory (co-mounted controllers once) and, with a cgroup2 hierarchy,
// the container's directory there.
func TestHostEntry(t *testing.T) {
	needRoot(t)
	id := "husk-entry-test-" + filepath.Base(t.TempDir())
	m, err := New(&configs.Cgroup{}, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	defer m.Destroy()
	e, err := m.Entry()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var v1 []string
	for c, dir := range m.Paths() {
		if c != "" && HostLayout() != V2 {
			if _, err := os.Stat(dir); err == nil {
				v1 = append(v1, dir)
			}
		}
	}
	slices.Sort(v1)
	v1 = slices.Compact(v1)
	var opened []string
	for _, f := range e.Tasks {
		if !strings.HasSuffix(f.Name(), "/tasks") {
			t.Errorf("opened %s, want a tasks file", f.Name())
		}
		opened = append(opened, filepath.Dir(f.Name()))
	}
	slices.Sort(opened)
	if !slices.Equal(opened, v1) {
		t.Errorf("tasks files opened in %v, want one per v1 directory %v", opened, v1)
	}
	if wantDir := HostLayout() != V1; (e.Dir != nil) != wantDir {
		t.Errorf("Dir %v on a %v host, want one: %v", e.Dir, HostLayout(), wantDir)
	}
}
