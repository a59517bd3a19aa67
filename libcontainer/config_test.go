package libcontainer

import (
	"slices"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"golang.org/x/sys/unix"
)

// The CNI netns path reaches a copy of the config, not the caller's.
func TestWithNetns(t *testing.T) {
	cfg := &configs.Config{Namespaces: []configs.Namespace{{Type: configs.NEWPID}, {Type: configs.NEWNET}}}
	got := withNetns(cfg, "/var/run/netns/x")
	if ns, _ := got.Namespace(configs.NEWNET); ns.Path != "/var/run/netns/x" {
		t.Errorf("network namespace path %q", ns.Path)
	}
	if ns, _ := cfg.Namespace(configs.NEWNET); ns.Path != "" {
		t.Errorf("the caller's config was changed: %q", ns.Path)
	}
	if m, _ := launch.BootstrapMessage(got); !slices.Contains(m.NsPaths, "net:/var/run/netns/x") || m.CloneFlags&unix.CLONE_NEWNET != 0 {
		t.Errorf("bootstrap message joins %v, clone flags %#x", m.NsPaths, m.CloneFlags)
	}
}
