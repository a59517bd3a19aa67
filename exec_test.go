package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

func TestParseUser(t *testing.T) {
	for _, c := range []struct {
		in       string
		uid, gid uint32
		err      string
	}{
		{in: "1000", uid: 1000},
		{in: "1000:100", uid: 1000, gid: 100},
		{in: "0:0"},
		{in: "bob", err: `--user "bob": the uid must be a number`},
		{in: "1000:staff", err: `--user "1000:staff": the gid must be a number`},
		{in: "-1", err: "the uid must be a number"},
		{in: "4294967296", err: "the uid must be a number"},
	} {
		uid, gid, err := parseUser(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseUser(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || uid != c.uid || gid != c.gid {
			t.Errorf("parseUser(%q) = %d, %d, %v; want %d, %d", c.in, uid, gid, err, c.uid, c.gid)
		}
	}
}

func TestAddCaps(t *testing.T) {
	p := &configs.Process{Capabilities: &configs.Capabilities{
		Bounding:  []string{"CAP_KILL", "CAP_NET_RAW"},
		Effective: []string{"CAP_KILL"},
		Permitted: []string{"CAP_KILL"},
	}}
	if err := addCaps(p, []string{"CAP_NET_RAW", "CAP_KILL"}); err != nil {
		t.Fatal(err)
	}
	c := p.Capabilities
	if !slices.Equal(c.Effective, []string{"CAP_KILL", "CAP_NET_RAW"}) || !slices.Equal(c.Permitted, c.Effective) ||
		!slices.Equal(c.Bounding, []string{"CAP_KILL", "CAP_NET_RAW"}) || len(c.Ambient) != 0 {
		t.Errorf("caps after --cap: %+v", c)
	}
	// Outside the container's bounding set: granted, as runc does.
	if err := addCaps(p, []string{"CAP_SYS_ADMIN"}); err != nil || !slices.Contains(c.Bounding, "CAP_SYS_ADMIN") ||
		!slices.Contains(c.Effective, "CAP_SYS_ADMIN") {
		t.Errorf("a capability outside the bounding set: %v, %+v", err, c)
	}
	// Unknown: ignored (with a warning), as runc does.
	before := slices.Clone(c.Effective)
	if err := addCaps(p, []string{"CAP_NOPE"}); err != nil || !slices.Equal(c.Effective, before) {
		t.Errorf("an unknown capability: %v, %+v", err, c)
	}
	// With inheritable ones, --cap also makes it ambient, as runc does.
	p.Capabilities.Inheritable = []string{"CAP_KILL"}
	if err := addCaps(p, []string{"CAP_KILL"}); err != nil || !slices.Equal(p.Capabilities.Ambient, []string{"CAP_KILL"}) {
		t.Errorf("ambient: %v, %v", p.Capabilities.Ambient, err)
	}
}
