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

// A pids limit counts init's Go threads: init then stops at CREATE_HOOKS
// for the parent to apply the limits once its runtime has started.
func TestInitConfigLateLimits(t *testing.T) {
	n := int64(0)
	for _, c := range []struct {
		name string
		res  configs.Resources
		want bool
	}{
		{"no limits", configs.Resources{}, false},
		{"memory only", configs.Resources{Memory: 1 << 30}, false},
		{"pids.limit", configs.Resources{PidsLimit: &n}, true},
		{"unified pids.max", configs.Resources{Unified: map[string]string{"pids.max": "5"}}, true},
	} {
		cfg := &configs.Config{Cgroup: &configs.Cgroup{Resources: c.res}}
		ic := initConfig(cfg)
		if ic.LateLimits != c.want || ic.AsksCreateHooks() != c.want {
			t.Errorf("%s: LateLimits %v, AsksCreateHooks %v, want %v", c.name, ic.LateLimits, ic.AsksCreateHooks(), c.want)
		}
		if cfg.LateLimits {
			t.Errorf("%s: the container's own config got LateLimits", c.name)
		}
	}
}
