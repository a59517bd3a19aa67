package libcontainer

import (
	"slices"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// The filter is compiled into a copy: the caller's config is not changed.
func TestWithCompiledSeccomp(t *testing.T) {
	cfg := &configs.Config{Process: &configs.Process{Args: []string{"sh"}},
		Seccomp: &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW",
			Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_ERRNO"}}}}
	got, err := withCompiledSeccomp(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seccomp.Program == nil || len(got.Seccomp.Program.Filter) == 0 {
		t.Error("the filter was not compiled")
	}
	if cfg.Seccomp.Program != nil {
		t.Error("the caller's config was changed")
	}
	if again, _ := withCompiledSeccomp(got); again != got {
		t.Error("a compiled filter was compiled again")
	}
	if none, _ := withCompiledSeccomp(&configs.Config{}); none.Seccomp != nil {
		t.Error("a config without seccomp got a filter")
	}
}

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
	if m, _ := bootstrapMessage(got); !slices.Contains(m.NsPaths, "net:/var/run/netns/x") || m.CloneFlags&unix.CLONE_NEWNET != 0 {
		t.Errorf("bootstrap message joins %v, clone flags %#x", m.NsPaths, m.CloneFlags)
	}
}
