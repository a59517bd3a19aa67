package rootfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// A write meant for the container's /proc/sys goes nowhere else.
func TestWriteSysctlNeedsProcfs(t *testing.T) {
	requireRoot(t)
	root := newRootfs(t)
	if err := os.MkdirAll(filepath.Join(root, "proc/sys/kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &configs.Config{Rootfs: root, Namespaces: newMountNS}
	runInChild(t, "sysctlnoproc", c, "", defaultFlags)
}

func init() {
	scenarios["sysctlnoproc"] = scenario{check: func(c *configs.Config, setupErr error) error {
		if setupErr != nil {
			return setupErr
		}
		err := WriteSysctl("kernel.hostname", "x")
		if err == nil || !strings.Contains(err.Error(), "/proc: not on procfs") {
			return fmt.Errorf("sysctl write with a plain /proc directory: %v, want not on procfs", err)
		}
		return nil
	}}
}
