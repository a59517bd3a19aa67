package libcontainer

import (
	"reflect"
	"slices"
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
		Process: &configs.Process{OomScoreAdj: &adj, CPUAffinity: &configs.CPUAffinity{Initial: []int{1, 65}}},
	}
	m, err := execMessage(cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
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
	if !slices.Equal(m.Affinity, []uint64{2, 2}) {
		t.Errorf("initial affinity mask %#x, want CPUs 1 and 65", m.Affinity)
	}
}

func TestBoundByInit(t *testing.T) {
	init := &configs.Process{NoNewPrivileges: true, Capabilities: &configs.Capabilities{
		Bounding: []string{"CAP_KILL", "CAP_CHOWN"},
	}}
	p := &configs.Process{Capabilities: &configs.Capabilities{Effective: []string{"CAP_CHOWN"}}}
	if err := boundByInit(init, p, nil); err != nil || !p.NoNewPrivileges {
		t.Errorf("within the bounding set: %v, no_new_privs %v", err, p.NoNewPrivileges)
	}
	// Beyond init's bounding set: granted, as runc does.
	asked := &configs.Capabilities{Bounding: []string{"CAP_SYS_ADMIN"}, Effective: []string{"CAP_SYS_ADMIN"}}
	p = &configs.Process{Capabilities: asked}
	if err := boundByInit(init, p, nil); err != nil || p.Capabilities != asked {
		t.Errorf("outside the bounding set: %+v, %v", p.Capabilities, err)
	}
	// No capabilities in --process: the container's, not all of them.
	p = &configs.Process{}
	if err := boundByInit(init, p, nil); err != nil || p.Capabilities != init.Capabilities {
		t.Errorf("no capabilities: %+v, %v", p.Capabilities, err)
	}
}

// --cap adds to the bounding, effective and permitted sets (ambient with
// inheritable ones), also beyond the container's bounding set, as runc.
func TestExecAddCaps(t *testing.T) {
	init := &configs.Process{Capabilities: &configs.Capabilities{Bounding: []string{"CAP_KILL", "CAP_NET_RAW"}}}
	p := &configs.Process{Capabilities: &configs.Capabilities{
		Bounding:  []string{"CAP_KILL", "CAP_NET_RAW"},
		Effective: []string{"CAP_KILL"},
		Permitted: []string{"CAP_KILL"},
	}}
	add := []string{"CAP_NET_RAW", "CAP_KILL"}
	if err := addCapabilities(p, add); err != nil {
		t.Fatal(err)
	}
	if err := boundByInit(init, p, add); err != nil {
		t.Fatal(err)
	}
	c := p.Capabilities
	if !slices.Equal(c.Effective, []string{"CAP_KILL", "CAP_NET_RAW"}) || !slices.Equal(c.Permitted, c.Effective) ||
		!slices.Equal(c.Bounding, []string{"CAP_KILL", "CAP_NET_RAW"}) || len(c.Ambient) != 0 {
		t.Errorf("caps after --cap: %+v", c)
	}
	add = []string{"CAP_SYS_ADMIN"}
	if err := addCapabilities(p, add); err != nil {
		t.Fatal(err)
	}
	if err := boundByInit(init, p, add); err != nil || !slices.Contains(c.Bounding, "CAP_SYS_ADMIN") ||
		!slices.Contains(c.Effective, "CAP_SYS_ADMIN") {
		t.Errorf("a capability outside the bounding set: %v, %+v", err, c)
	}
	// Unknown: ignored (with a warning), as runc does.
	before := slices.Clone(c.Effective)
	if err := addCapabilities(p, []string{"CAP_NOPE"}); err != nil || !slices.Equal(c.Effective, before) {
		t.Errorf("an unknown capability: %v, %+v", err, c)
	}
	// With inheritable ones, --cap also makes it ambient, as runc does.
	p = &configs.Process{Capabilities: &configs.Capabilities{Bounding: []string{"CAP_KILL"}, Inheritable: []string{"CAP_KILL"}}}
	if err := addCapabilities(p, []string{"CAP_KILL"}); err != nil || !slices.Equal(p.Capabilities.Ambient, []string{"CAP_KILL"}) {
		t.Errorf("ambient: %v, %v", p.Capabilities.Ambient, err)
	}
}

func TestParseSubCgroups(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want map[string]string
	}{
		{[]string{"sub"}, map[string]string{"": "sub"}},
		{[]string{"./a/../sub/"}, map[string]string{"": "sub"}},
		{[]string{"/abs"}, map[string]string{"": "abs"}}, // joined below, as runc
		{[]string{"."}, map[string]string{"": ""}},
		{[]string{"pids,memory:x/y", "cpu:z"}, map[string]string{"pids": "x/y", "memory": "x/y", "cpu": "z"}},
	} {
		got, err := ParseSubCgroups(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSubCgroups(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"..", "../x", "a/../../x", "/../x", "pids:../x"} {
		_, err := ParseSubCgroups([]string{in})
		if err == nil || !strings.Contains(err.Error(), "bad sub cgroup path") || !strings.Contains(err.Error(), in) {
			t.Errorf("ParseSubCgroups(%q): %v, want runc's \"bad sub cgroup path\" and the value", in, err)
		}
	}
}
