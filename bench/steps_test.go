package main

import "testing"

func TestInTurn(t *testing.T) {
	b := &bench{runtimes: []*runtime{{name: "husk"}, {name: "runc"}, {name: "crun"}}}
	want := []string{"husk runc crun", "runc crun husk", "crun husk runc", "husk runc crun"}
	for i, w := range want {
		got := ""
		for _, r := range b.inTurn(i) {
			if got != "" {
				got += " "
			}
			got += r.name
		}
		if got != w {
			t.Errorf("round %d: %s, want %s", i, got, w)
		}
	}
}
