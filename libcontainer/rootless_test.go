package libcontainer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

func rootlessContainer(rootless bool, paths map[string]string) *Container {
	return &Container{ID: "c1", State: &State{ID: "c1", Owner: "alice", CgroupPaths: paths,
		Config: &configs.Config{RootlessEUID: rootless}}}
}

func TestRootlessJoin(t *testing.T) {
	denied := func(int) error { return fmt.Errorf("move pid 7: %w", os.ErrPermission) }
	other := errors.New("no such cgroup")
	if err := rootlessContainer(true, nil).rootlessJoin(denied)(7); err != nil {
		t.Errorf("rootless, move refused: %v, want a warning only", err)
	}
	if err := rootlessContainer(true, nil).rootlessJoin(func(int) error { return other })(7); err != other {
		t.Errorf("rootless, another error: %v", err)
	}
	if err := rootlessContainer(false, nil).rootlessJoin(denied)(7); !errors.Is(err, os.ErrPermission) {
		t.Errorf("root's container, move refused: %v, want the error", err)
	}
}

func TestNoCgroups(t *testing.T) {
	err := rootlessContainer(true, nil).noCgroups()
	for _, want := range []string{"container c1 has no cgroups", "created rootless", "alice", "no cgroup was writable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := rootlessContainer(false, nil).noCgroups(); strings.Contains(err.Error(), "rootless") {
		t.Errorf("root's container: %v", err)
	}
}

func TestRemoveDelegatedParent(t *testing.T) {
	top := t.TempDir()
	parent := filepath.Join(top, "husk")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(parent, "c2")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	c := rootlessContainer(true, map[string]string{"": filepath.Join(parent, "c1")})
	c.removeDelegatedParent()
	if _, err := os.Stat(parent); err != nil {
		t.Fatalf("husk/ removed while c2 is in it: %v", err)
	}
	os.Remove(other)
	rootlessContainer(false, c.State.CgroupPaths).removeDelegatedParent()
	if _, err := os.Stat(parent); err != nil {
		t.Fatalf("husk/ removed for root's container: %v", err)
	}
	c.removeDelegatedParent()
	if _, err := os.Stat(parent); !os.IsNotExist(err) {
		t.Fatalf("husk/ left once empty: %v", err)
	}
}
