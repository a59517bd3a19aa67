package main

import (
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
		{in: "2147483647:2147483647", uid: 2147483647, gid: 2147483647},
		{in: "4294967295:4294967295", err: `--user "4294967295:4294967295": uid 4294967295: uids and gids must be in range 0-2147483647`},
		{in: "4294967296", err: "uid 4294967296: uids and gids must be in range 0-2147483647"},
		{in: "18446744073709551616", err: "uid 18446744073709551616: uids and gids must be in range"},
		{in: "0:2147483648", err: "gid 2147483648: uids and gids must be in range 0-2147483647"},
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

// exec --process without a profile or label gets the container's, as in
// runc; one that names its own keeps it.
func TestExecProcessFileInheritsTheLabels(t *testing.T) {
	cfg := &configs.Config{Process: &configs.Process{AppArmorProfile: "docker-default", SelinuxLabel: "u:r:container_t:s0:c1,c2"}}
	p := &configs.Process{}
	inheritLabels(p, cfg)
	if p.AppArmorProfile != "docker-default" || p.SelinuxLabel != "u:r:container_t:s0:c1,c2" {
		t.Errorf("inherited %q, %q", p.AppArmorProfile, p.SelinuxLabel)
	}
	p = &configs.Process{AppArmorProfile: "other", SelinuxLabel: "u:r:t:s0"}
	inheritLabels(p, cfg)
	if p.AppArmorProfile != "other" || p.SelinuxLabel != "u:r:t:s0" {
		t.Errorf("own labels replaced: %q, %q", p.AppArmorProfile, p.SelinuxLabel)
	}
	inheritLabels(p, nil)
}
