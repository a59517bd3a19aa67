package libcontainer

import (
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

func TestExecMessageJoinsEveryNamespaceUserFirst(t *testing.T) {
	adj := 5
	cfg := &configs.Config{
		Namespaces: []configs.Namespace{
			{Type: configs.NEWNET, Path: "/var/run/netns/x"},
			{Type: configs.NEWPID}, {Type: configs.NEWNS}, {Type: configs.NEWUSER},
		},
		Process: &configs.Process{OomScoreAdj: &adj},
	}
	m := execMessage(cfg, 42)
	want := "user:/proc/42/ns/user,net:/proc/42/ns/net,pid:/proc/42/ns/pid,mnt:/proc/42/ns/mnt"
	if got := strings.Join(m.NsPaths, ","); got != want {
		t.Errorf("ns paths %s, want %s", got, want)
	}
	if m.CloneFlags != 0 || m.UIDMap != "" || m.TimeOffsets != "" {
		t.Errorf("an exec unshares nothing and maps nothing: %+v", m)
	}
	if m.OomScoreAdj != "5" {
		t.Errorf("oom_score_adj %q", m.OomScoreAdj)
	}
}

func TestBoundByInit(t *testing.T) {
	init := &configs.Process{NoNewPrivileges: true, Capabilities: &configs.Capabilities{
		Bounding: []string{"CAP_KILL", "CAP_CHOWN"},
	}}
	p := &configs.Process{Capabilities: &configs.Capabilities{Effective: []string{"CAP_CHOWN"}}}
	if err := boundByInit(init, p); err != nil || !p.NoNewPrivileges {
		t.Errorf("within the bounding set: %v, no_new_privs %v", err, p.NoNewPrivileges)
	}
	// Beyond init's bounding set: granted, as runc does.
	asked := &configs.Capabilities{Bounding: []string{"CAP_SYS_ADMIN"}, Effective: []string{"CAP_SYS_ADMIN"}}
	p = &configs.Process{Capabilities: asked}
	if err := boundByInit(init, p); err != nil || p.Capabilities != asked {
		t.Errorf("outside the bounding set: %+v, %v", p.Capabilities, err)
	}
	// No capabilities in --process: the container's, not all of them.
	p = &configs.Process{}
	if err := boundByInit(init, p); err != nil || p.Capabilities != init.Capabilities {
		t.Errorf("no capabilities: %+v, %v", p.Capabilities, err)
	}
}
