package caps

import (
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

func TestNamesTable(t *testing.T) {
	all := Names()
	if len(all) != 41 {
		t.Fatalf("Names() has %d entries, want 41 (CAP_CHOWN..CAP_CHECKPOINT_RESTORE)", len(all))
	}
	for v, n := range all {
		if !strings.HasPrefix(n, "CAP_") {
			t.Errorf("Names()[%d] = %q, want a CAP_ name", v, n)
		}
		got, ok := Value(n)
		if !ok || got != v {
			t.Errorf("Value(%q) = %d, %v; want %d, true", n, got, ok, v)
		}
	}
	for n, want := range map[string]int{"CAP_CHOWN": 0, "CAP_SYS_ADMIN": 21, "CAP_CHECKPOINT_RESTORE": 40} {
		if got, ok := Value(n); !ok || got != want {
			t.Errorf("Value(%q) = %d, %v; want %d", n, got, ok, want)
		}
	}
	for _, n := range []string{"", "CAP_FOO", "cap_chown", "CHOWN", "CAP_CHOWN "} {
		if v, ok := Value(n); ok {
			t.Errorf("Value(%q) = %d, true; want not found", n, v)
		}
	}
	all[0] = "changed"
	if Names()[0] != "CAP_CHOWN" {
		t.Error("Names() shares its table with the caller")
	}
}

func TestLastCap(t *testing.T) {
	last, err := LastCap()
	if err != nil {
		t.Fatal(err)
	}
	probed, err := probeLastCap()
	if err != nil {
		t.Fatal(err)
	}
	if last != probed {
		t.Errorf("LastCap() = %d, probing the bounding set says %d", last, probed)
	}
	if last < 36 {
		t.Errorf("LastCap() = %d, implausibly low", last)
	}
}

func TestMakePlan(t *testing.T) {
	c := &configs.Capabilities{
		Bounding:    []string{"CAP_CHOWN", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"},
		Effective:   []string{"CAP_CHOWN", "CAP_PERFMON"},
		Permitted:   []string{"CAP_CHOWN", "CAP_KILL", "CAP_PERFMON"},
		Inheritable: []string{"CAP_KILL"},
		Ambient:     []string{"CAP_KILL", "CAP_BPF"},
	}
	// A kernel whose last capability is CAP_AUDIT_READ (37), like 4.x.
	p, skipped, err := makePlan(c, 37)
	if err != nil {
		t.Fatal(err)
	}
	want := plan{effective: 1 << 0, permitted: 1<<0 | 1<<5, inheritable: 1 << 5, ambient: []int{5}}
	if p.effective != want.effective || p.permitted != want.permitted ||
		p.inheritable != want.inheritable || !slices.Equal(p.ambient, want.ambient) {
		t.Errorf("makePlan = %+v, want %+v", p, want)
	}
	if wantSkipped := []string{"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"}; !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped = %q, want %q", skipped, wantSkipped)
	}

	p, skipped, err = makePlan(&configs.Capabilities{}, 40)
	if err != nil || p.effective|p.permitted|p.inheritable != 0 || p.ambient != nil || skipped != nil {
		t.Errorf("empty config: plan %+v, skipped %q, err %v; want nothing", p, skipped, err)
	}
}

func TestMakePlanErrors(t *testing.T) {
	for _, tc := range []struct {
		c    configs.Capabilities
		want string
	}{
		{configs.Capabilities{Ambient: []string{"CAP_FOO"}}, `ambient: unknown capability "CAP_FOO"`},
		{configs.Capabilities{Bounding: []string{"chown"}}, `bounding: unknown capability "chown"`},
		{configs.Capabilities{Effective: []string{"CAP_KILL", "CAP_CHOWN"}, Permitted: []string{"CAP_KILL"}},
			"effective: CAP_CHOWN not in the permitted set"},
	} {
		_, _, err := makePlan(&tc.c, 40)
		if err == nil || err.Error() != tc.want {
			t.Errorf("makePlan(%+v) error = %v, want %q", tc.c, err, tc.want)
		}
	}
}
