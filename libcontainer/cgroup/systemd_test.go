package cgroup

import (
	"strings"
	"testing"
	"time"
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
