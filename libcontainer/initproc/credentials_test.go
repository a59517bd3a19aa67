package initproc

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestHaveIDs(t *testing.T) {
	get := func() (int, int, int) { return 1000, 1000, 1000 }
	if !haveIDs(get, 1000) {
		t.Error("ids 1000/1000/1000: want have 1000")
	}
	if haveIDs(get, 0) {
		t.Error("ids 1000/1000/1000: want not have 0")
	}
	mixed := func() (int, int, int) { return 0, 1000, 0 }
	if haveIDs(mixed, 0) || haveIDs(mixed, 1000) {
		t.Error("ids 0/1000/0: a set call is still needed for 0 and for 1000")
	}
	r, e, s := unix.Getresuid()
	if haveIDs(unix.Getresuid, r) != (r == e && e == s) {
		t.Error("haveIDs(getresuid) disagrees with getresuid")
	}
}

func TestHaveGroups(t *testing.T) {
	cur, err := unix.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	if !haveGroups(cur) {
		t.Errorf("haveGroups(%v), this process's own groups: want true", cur)
	}
	rev := make([]int, len(cur))
	for i, g := range cur {
		rev[len(cur)-1-i] = g
	}
	if !haveGroups(rev) {
		t.Errorf("haveGroups(%v), the same in another order: want true", rev)
	}
	if haveGroups(append(append([]int{}, cur...), 4242)) {
		t.Error("one group more: want false")
	}
	if len(cur) > 0 && haveGroups(cur[1:]) {
		t.Error("one group fewer: want false")
	}
	if len(cur) > 0 && haveGroups(append(append([]int{}, cur[1:]...), cur[0]+100000)) {
		t.Error("a different group: want false")
	}
}
