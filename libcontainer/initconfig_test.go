package libcontainer

import (
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// husk init gets the config without its cgroup settings, and the
// container's own config keeps them.
func TestInitConfigLeavesCgroupsOut(t *testing.T) {
	cfg := &configs.Config{Hostname: "h", Cgroup: &configs.Cgroup{Path: "/husk/x"}}
	ic := initConfig(cfg)
	if ic.Cgroup != nil || ic.Hostname != "h" {
		t.Errorf("init's config: cgroup %+v, hostname %q", ic.Cgroup, ic.Hostname)
	}
	if cfg.Cgroup == nil || cfg.Cgroup.Path != "/husk/x" {
		t.Errorf("the container's config lost its cgroup: %+v", cfg.Cgroup)
	}
	if plain := (&configs.Config{}); initConfig(plain) != plain {
		t.Error("a config without cgroup settings was copied")
	}
}

// A pids limit counts init's Go threads: the create driver then asks
// init to stop at CREATE_HOOKS, for the limits to be applied once its
// runtime has started.
func TestLimitsPids(t *testing.T) {
	n := int64(0)
	for _, c := range []struct {
		name string
		cg   *configs.Cgroup
		want bool
	}{
		{"no cgroup settings", nil, false},
		{"no limits", &configs.Cgroup{}, false},
		{"memory only", &configs.Cgroup{Resources: configs.Resources{Memory: 1 << 30}}, false},
		{"pids.limit", &configs.Cgroup{Resources: configs.Resources{PidsLimit: &n}}, true},
		{"unified pids.max", &configs.Cgroup{Resources: configs.Resources{Unified: map[string]string{"pids.max": "5"}}}, true},
	} {
		if got := limitsPids(&configs.Config{Cgroup: c.cg}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
