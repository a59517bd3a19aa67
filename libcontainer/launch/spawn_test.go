package launch

import (
	"os"
	"strings"
	"testing"
)

// TestStartInCgroupFilesAndStatus: files become the child's fds 0, 1, 2,
// 3, … (a nil stdio file is /dev/null), env is exactly what is given, and
// wait reports the exit status or the signal.
func TestStartInCgroupFilesAndStatus(t *testing.T) {
	dir := t.TempDir()
	out, err := os.Create(dir + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	extra, err := os.Create(dir + "/extra")
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	script := `readlink /proc/self/fd/0; echo "$ONLY"; env | wc -l; echo to-fd-3 >&3; exit 3`
	c, born, err := startInCgroup(nil, "/bin/sh", []string{"sh", "-c", script}, []string{"ONLY=yes"},
		[]*os.File{nil, out, out, extra})
	if err != nil {
		t.Fatal(err)
	}
	if born {
		t.Error("born in a cgroup without a cgroup dir")
	}
	if err := c.wait(); err == nil || err.Error() != "exit status 3" {
		t.Errorf("wait: %v, want exit status 3", err)
	}
	got, _ := os.ReadFile(dir + "/out")
	// sh itself may add PWD and the like to env; ONLY must be there.
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 || lines[0] != "/dev/null" || lines[1] != "yes" {
		t.Errorf("child's output %q: want /dev/null as stdin and ONLY=yes", got)
	}
	if b, _ := os.ReadFile(dir + "/extra"); string(b) != "to-fd-3\n" {
		t.Errorf("fd 3 got %q", b)
	}

	c, _, err = startInCgroup(nil, "/bin/sh", []string{"sh", "-c", "kill -9 $$"}, nil, []*os.File{nil, nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.wait(); err == nil || err.Error() != "signal: killed" {
		t.Errorf("wait: %v, want signal: killed", err)
	}
	c, _, err = startInCgroup(nil, "/bin/sh", []string{"sh", "-c", "exit 0"}, nil, []*os.File{nil, nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.wait(); err != nil {
		t.Errorf("wait: %v, want nil", err)
	}
	if _, _, err := startInCgroup(nil, "/nonexistent/husk", []string{"husk"}, nil, []*os.File{nil, nil, nil}); err == nil {
		t.Error("started a binary that does not exist")
	}
}
