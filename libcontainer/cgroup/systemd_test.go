package cgroup

import (
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
)

func TestCallTimeout(t *testing.T) {
	for _, c := range []struct {
		env  string
		want time.Duration
		err  string
	}{
		{"", dbusTimeout, ""},
		{"5s", 5 * time.Second, ""},
		{"1500ms", 1500 * time.Millisecond, ""},
		{"soon", 0, `HUSK_DBUS_TIMEOUT: "soon"`},
		{"-3s", 0, `HUSK_DBUS_TIMEOUT: "-3s"`},
		{"0", 0, `HUSK_DBUS_TIMEOUT: "0"`},
	} {
		t.Setenv(dbusTimeoutEnv, c.env)
		got, err := callTimeout()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %s", c.env, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %v, %v; want %v", c.env, got, err, c.want)
		}
	}
}

func TestTimedManagerNamesTheUnit(t *testing.T) {
	tm := timedManager{unit: "husk-x.scope", timeout: 10 * time.Millisecond}
	block := make(chan struct{})
	defer close(block)
	err := tm.timed("start", func() error { <-block; return nil })
	if err == nil || !strings.Contains(err.Error(), "husk-x.scope") || !strings.Contains(err.Error(), "D-Bus") {
		t.Fatalf("got %v", err)
	}
}

// After a timed-out call the library's connection is stuck: later calls
// of the process are refused at once, naming the unit, and never wait.
func TestStuckManagerRefuses(t *testing.T) {
	lc := &cgroups.Cgroup{Resources: &cgroups.Resources{}}
	if _, err := newStuck(lc, "husk-x.scope", "", time.Second); err == nil || !strings.Contains(err.Error(), "husk-x.scope") {
		t.Fatalf("no path: %v", err)
	}
	s, err := newStuck(lc, "husk-x.scope", t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.Apply(1), s.Set(&cgroups.Resources{})} {
		if err == nil || !strings.Contains(err.Error(), "husk-x.scope") || !strings.Contains(err.Error(), "D-Bus") {
			t.Errorf("got %v", err)
		}
	}
}
