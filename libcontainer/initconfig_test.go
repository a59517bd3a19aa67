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
