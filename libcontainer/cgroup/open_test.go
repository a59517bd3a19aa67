package cgroup

import (
	"testing"

	"github.com/opencontainers/cgroups"
)

// A container whose state was saved by a husk that saw no unified
// hierarchy (bench runs in a mount namespace without it) is reopened as v1
// only on a hybrid host, so delete --force can still remove it.
func TestReopenHybridWithoutUnifiedPath(t *testing.T) {
	cg := &cgroups.Cgroup{Path: "/husk/x", Resources: &cgroups.Resources{}}
	m, err := open(Hybrid, cg, map[string]string{"memory": "/sys/fs/cgroup/memory/husk/x"})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if m.layout != V1 || m.v2 != nil {
		t.Errorf("layout %v, v2 %v: want v1 only", m.layout, m.v2)
	}
}
