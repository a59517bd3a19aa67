package nsenter

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
)

func fullPlan() *bootstrap.ExecPlan {
	return &bootstrap.ExecPlan{
		Args: []string{"/bin/sh", "-c", "echo hi", ""}, Env: []string{"PATH=/bin", "HOME="},
		FillHome: true, Cwd: "/srv/a b", UID: 1000, GID: 1001, Groups: []uint32{5, 6, 7}, Umask: 0o027,
		Rlimits: []bootstrap.PlanRlimit{
			{Type: 7, Index: 0, Soft: 1024, Hard: 4096},
			{Type: 0, Index: 2, Soft: ^uint64(0), Hard: ^uint64(0)},
		},
		Caps:       bootstrap.PlanCaps{Bounding: 0x20, Effective: 0x20, Permitted: 0x20, Inheritable: 1, Ambient: 0, LastCap: 40},
		NoNewPrivs: true, Seccomp: make([]byte, 8*5), SeccompFlags: 2,
	}
}

func TestExecPlanRoundTrip(t *testing.T) {
	for _, p := range []*bootstrap.ExecPlan{
		fullPlan(),
		{Args: []string{"true"}, Cwd: "/", Caps: bootstrap.PlanCaps{LastCap: 40}},
	} {
		m := &bootstrap.Message{NsPaths: []string{"mnt:/proc/1/ns/mnt"}, Plan: p}
		got, err := ParseExecPlan(m.Encode())
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, p)
		}
	}
	if got, err := ParseExecPlan((&bootstrap.Message{}).Encode()); got != nil || err != nil {
		t.Errorf("no plan: got %+v, %v", got, err)
	}
}

func TestExecPlanMalformed(t *testing.T) {
	u32 := func(typ int, v uint32) *nl.RtAttr { return nl.NewRtAttr(typ, nl.Uint32Attr(v)) }
	base := func(skip int, extra ...*nl.RtAttr) []byte {
		a := nl.NewRtAttr(bootstrap.AttrExecPlan, nil)
		for _, c := range []*nl.RtAttr{
			nl.NewRtAttr(bootstrap.PlanArgs, []byte("true\x00")), nl.NewRtAttr(bootstrap.PlanEnv, nil),
			nl.NewRtAttr(bootstrap.PlanCwd, []byte("/")), u32(bootstrap.PlanUID, 0), u32(bootstrap.PlanGID, 0),
			u32(bootstrap.PlanUmask, 0o22), nl.NewRtAttr(bootstrap.AttrPlanCaps, make([]byte, 48)),
		} {
			if int(c.Type) != skip {
				a.AddChild(c)
			}
		}
		for _, c := range extra {
			a.AddChild(c)
		}
		return message(a)
	}
	if _, err := ParseExecPlan(base(0)); err != nil {
		t.Fatalf("the base plan: %v", err)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"no args", base(bootstrap.PlanArgs), "attributes missing"},
		{"no caps", base(bootstrap.AttrPlanCaps), "attributes missing"},
		{"uid size", base(bootstrap.PlanUID, nl.NewRtAttr(bootstrap.PlanUID, []byte{1})), "4: 1 bytes, want 4"},
		{"uid twice", base(0, u32(bootstrap.PlanUID, 1)), "attribute 4 appears twice"},
		{"args not terminated", base(bootstrap.PlanArgs, nl.NewRtAttr(bootstrap.PlanArgs, []byte("true"))), "not NUL-terminated"},
		{"empty args", base(bootstrap.PlanArgs, nl.NewRtAttr(bootstrap.PlanArgs, nil)), "no args"},
		{"cwd with NUL", base(bootstrap.PlanCwd, nl.NewRtAttr(bootstrap.PlanCwd, []byte("/a\x00b"))), "CWD: empty or with a NUL"},
		{"filter size", base(0, nl.NewRtAttr(bootstrap.PlanSeccomp, make([]byte, 12)), u32(bootstrap.PlanSeccompFlags, 0)), "12 bytes is not a BPF program"},
		{"filter without flags", base(0, nl.NewRtAttr(bootstrap.PlanSeccomp, make([]byte, 8))), "SECCOMP without SECCOMP_FLAGS"},
		{"groups size", base(0, nl.NewRtAttr(bootstrap.PlanGroups, make([]byte, 6))), "not whole u32s"},
		{"rlimit size", base(0, nl.NewRtAttr(bootstrap.AttrPlanRlimit, make([]byte, 20))), "20 bytes, want 24"},
		{"unknown", base(0, u32(99, 0)), "unknown attribute type 99"},
		{"plan twice", message(nl.NewRtAttr(bootstrap.AttrExecPlan, nil), nl.NewRtAttr(bootstrap.AttrExecPlan, nil)), "EXEC_PLAN appears twice"},
	} {
		_, err := ParseExecPlan(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
