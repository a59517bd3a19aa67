package nsenter

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/caps"
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

// TestExecPlanRunsTheProcess runs a plan through nsexec (the re-executed
// test binary, no namespaces): the process is set up in C and exec'd, as
// the plan says, and a failure before READY is an ERROR in the Go init's
// words.
func TestExecPlanRunsTheProcess(t *testing.T) {
	last, err := caps.LastCap()
	if err != nil {
		t.Fatal(err)
	}
	script := `echo "$A $HOME $(id -u):$(id -g) $(umask) $(pwd)" >&2; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status >&2`
	plan := &bootstrap.ExecPlan{
		Args: []string{"sh", "-c", script}, Env: []string{"A=1", "PATH=/nope:/usr/bin:/bin", "HOME="}, FillHome: true,
		Cwd: "/tmp", UID: 65534, GID: 65534, Umask: 0o077, NoNewPrivs: true,
		Caps: bootstrap.PlanCaps{Bounding: 1 << 5, LastCap: uint32(last)},
	}
	p := startInit(t, (&bootstrap.Message{Plan: plan}).Encode())
	p.pid = p.recvPid(bootstrap.SyncPid)
	p.recv(bootstrap.SyncReady)
	var ws unix.WaitStatus
	if _, err := unix.Wait4(p.pid, &ws, 0, nil); err != nil || ws.ExitStatus() != 0 {
		t.Fatalf("the process: %v, status %v (stderr %q)", err, ws, p.stderrText())
	}
	p.pid = 0
	out := p.stderrText()
	home := "/" // of uid 65534, from the host's /etc/passwd (no mount namespace here)
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Split(line, ":"); len(f) >= 6 && f[2] == "65534" && f[5] != "" {
				home = f[5]
				break
			}
		}
	}
	for _, want := range []string{"1 " + home + " 65534:65534 0077 /tmp\n", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000020", "NoNewPrivs:\t1"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the process's output %q", want, out)
		}
	}

	plan.Args = []string{"no-such-binary"}
	p = startInit(t, (&bootstrap.Message{Plan: plan}).Encode())
	p.pid = p.recvPid(bootstrap.SyncPid)
	if msg := string(p.recv(bootstrap.SyncError)); msg != `exec: "no-such-binary": executable file not found in $PATH` {
		t.Errorf("error %q", msg)
	}
}

func FuzzParseExecPlan(f *testing.F) {
	f.Add((&bootstrap.Message{Plan: fullPlan()}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseExecPlan(b)
		if err == nil && p != nil {
			if _, err := ParseExecPlan((&bootstrap.Message{Plan: p}).Encode()); err != nil {
				t.Errorf("re-encoded %+v: %v", p, err)
			}
		}
	})
}
