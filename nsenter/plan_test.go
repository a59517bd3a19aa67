package nsenter

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/caps"
)

func fullPlan() *bootstrap.Plan {
	pers := uint32(8)
	return &bootstrap.Plan{
		Args: []string{"/bin/sh", "-c", "echo hi", ""}, Env: []string{"PATH=/bin", "HOME="},
		FillHome: true, Cwd: "/srv/a b", Path: "/bin/hook", UID: 1000, GID: 1001, Groups: []uint32{5, 6, 7}, Umask: 0o027,
		Rlimits: []bootstrap.PlanRlimit{
			{Type: 7, Index: 0, Soft: 1024, Hard: 4096},
			{Type: 0, Index: 2, Soft: ^uint64(0), Hard: ^uint64(0)},
		},
		Caps:       bootstrap.PlanCaps{Bounding: 0x20, Effective: 0x20, Permitted: 0x20, Inheritable: 1, Ambient: 0, LastCap: 40},
		NoNewPrivs: true, Keyring: true, Seccomp: make([]byte, 8*5), SeccompFlags: 2,
		Affinity:    []uint64{0x3, 1 << 63},
		MemPolicy:   &bootstrap.PlanMemPolicy{Mode: 2, Flags: 1 << 15, Nodes: []uint64{1}},
		Personality: &pers, IOPrio: &bootstrap.PlanIOPrio{Class: 2, Priority: 6},
		Sched:    &bootstrap.PlanSched{Policy: 6, Nice: -3, Priority: 9, Cpuset: true, Flags: 1, Runtime: 10, Deadline: 20, Period: 30},
		AppArmor: "husk-default", SELinux: "system_u:system_r:container_t:s0",
		Listener: &bootstrap.PlanListener{Msg: []byte(`{"pid":,"x":{"pid":}}`), PidAt: []uint32{7, 19}},
		TTY:      &bootstrap.PlanTTY{Open: true, HasSize: true, Rows: 33, Cols: 101},
		Rootfs: &bootstrap.PlanRootfs{Masked: []string{"/proc/kcore", "/sys/firmware"}, Readonly: []string{"/proc/sys"},
			MountLabel: "system_u:object_r:container_file_t:s0", ReadonlyDev: `mounts[3]: error mounting "tmpfs" to rootfs at "/dev"`,
			ReadonlyRoot: true},
		System: &bootstrap.PlanSystem{Hostname: "box", Domainname: "example.org",
			Sysctls: []bootstrap.PlanSysctl{{Key: "kernel.shmmax", Value: "4096"}, {Key: "net.ipv4.ip_forward", Value: ""}}},
	}
}

func encode(t testing.TB, p *bootstrap.Plan) []byte {
	t.Helper()
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPlanRoundTrip(t *testing.T) {
	for _, p := range []*bootstrap.Plan{
		fullPlan(),
		{Args: []string{"true"}, Cwd: "/", Caps: bootstrap.PlanCaps{LastCap: 40}},
		// Past every 16-bit length: 1 MiB of environment, 65536 groups.
		{Args: []string{"true"}, Env: []string{strings.Repeat("a", 1<<20)}, Cwd: "/", Groups: make([]uint32, 65536)},
	} {
		got, err := ParsePlan(encode(t, p))
		if err != nil {
			t.Fatalf("%.200v: %v", p, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("round trip:\n got %.300v\nwant %.300v", got, p)
		}
	}
}

// rec is one record: a u32 type, a u32 length, the payload, zeros to 8.
func rec(typ int, payload []byte) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(typ))
	b = binary.NativeEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	return append(b, make([]byte, (8-len(payload)%8)%8)...)
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

func TestPlanMalformed(t *testing.T) {
	base := func(skip int, extra ...[]byte) []byte {
		var b []byte
		for _, r := range []struct {
			typ int
			p   []byte
		}{
			{bootstrap.RecArgs, []byte("true\x00")}, {bootstrap.RecEnv, nil}, {bootstrap.RecCwd, []byte("/\x00")},
			{bootstrap.RecUID, u32(0)}, {bootstrap.RecGID, u32(0)}, {bootstrap.RecUmask, u32(0o22)},
			{bootstrap.RecCaps, make([]byte, 48)},
		} {
			if r.typ != skip {
				b = append(b, rec(r.typ, r.p)...)
			}
		}
		for _, e := range extra {
			b = append(b, e...)
		}
		return b
	}
	if _, err := ParsePlan(base(0)); err != nil {
		t.Fatalf("the base plan: %v", err)
	}
	huge := rec(bootstrap.RecEnv, nil)
	binary.NativeEndian.PutUint32(huge[4:], 1<<31) // a length past the end
	unpadded := rec(bootstrap.RecPath, []byte("/x\x00"))
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"no args", base(bootstrap.RecArgs), "records missing"},
		{"no caps", base(bootstrap.RecCaps), "records missing"},
		{"uid size", base(bootstrap.RecUID, rec(bootstrap.RecUID, []byte{1})), "record UID: 1 bytes, want 4"},
		{"uid twice", base(0, rec(bootstrap.RecUID, u32(1))), "record UID appears twice"},
		{"args not terminated", base(bootstrap.RecArgs, rec(bootstrap.RecArgs, []byte("true"))), "not NUL-terminated"},
		{"empty args", base(bootstrap.RecArgs, rec(bootstrap.RecArgs, nil)), "no args"},
		{"cwd with NUL", base(bootstrap.RecCwd, rec(bootstrap.RecCwd, []byte("/a\x00b\x00"))), "CWD: want one non-empty"},
		{"cwd empty", base(bootstrap.RecCwd, rec(bootstrap.RecCwd, []byte{0})), "CWD: want one non-empty"},
		{"filter size", base(0, rec(bootstrap.RecSeccomp, make([]byte, 12)), rec(bootstrap.RecSeccompFlags, u32(0))), "12 bytes is not a BPF program"},
		{"filter without flags", base(0, rec(bootstrap.RecSeccomp, make([]byte, 8))), "SECCOMP without SECCOMP_FLAGS"},
		{"groups size", base(0, rec(bootstrap.RecGroups, make([]byte, 6))), "not 0 to 65536 u32 gids"},
		{"too many groups", base(0, rec(bootstrap.RecGroups, make([]byte, 4*65537))), "not 0 to 65536 u32 gids"},
		{"rlimit size", base(0, rec(bootstrap.RecRlimit, make([]byte, 20))), "20 bytes, want 24"},
		{"unknown", base(0, rec(99, u32(0))), "unknown record type 99"},
		{"length past the end", base(0, huge), "runs past the end"},
		{"truncated header", base(0, []byte{1, 0, 0}), "truncated record header"},
		{"missing padding", base(0, unpadded[:len(unpadded)-5]), "padding runs past the end"},
		{"padding not zero", base(0, append(unpadded[:len(unpadded)-1:len(unpadded)-1], 'x')), "padding is not zero"},
		{"listener hole", base(0, rec(bootstrap.RecListener, append(append(u32(1), u32(9)...), "ab"...))), "pid offset 9 past"},
		{"listener holes out of order", base(0, rec(bootstrap.RecListener, append(append(u32(2), append(u32(2), u32(1)...)...), "ab"...))), "out of order"},
		{"listener holes", base(0, rec(bootstrap.RecListener, append(u32(5), make([]byte, 24)...))), "5 pid offsets, over 4"},
		{"affinity size", base(0, rec(bootstrap.RecAffinity, make([]byte, 4))), "not a mask"},
		{"caps last", base(bootstrap.RecCaps, rec(bootstrap.RecCaps, append(append(make([]byte, 40), u32(64)...), u32(0)...))), "last_cap 64 over 63"},
		{"flag with payload", base(0, rec(bootstrap.RecNoNewPrivs, []byte{1})), "NNP: 1 bytes, want 0"},
		{"over the limit", make([]byte, bootstrap.PlanMax+1), "over the 16777216-byte limit"},
		{"sysctl without uts", base(0, rec(bootstrap.RecSysctl, []byte("a\x00b\x00"))), "SYSCTL without UTS"},
		{"one uts name", base(0, rec(bootstrap.RecUTS, []byte("box\x00"))), "UTS: 1 names, want 2"},
		{"three uts names", base(0, rec(bootstrap.RecUTS, []byte("a\x00b\x00c\x00"))), "UTS: 3 names, want 2"},
		{"uts not terminated", base(0, rec(bootstrap.RecUTS, []byte("a\x00b"))), "want two NUL-terminated"},
		{"long host name", base(0, rec(bootstrap.RecUTS, append(bytes.Repeat([]byte("a"), 4096), 0, 0))), "UTS: a name of 4096 bytes or more"},
		{"sysctl without a value", base(0, rec(bootstrap.RecUTS, []byte("\x00\x00")), rec(bootstrap.RecSysctl, []byte("a\x00b\x00c\x00"))), "SYSCTL: 3 strings, not key and value pairs"},
		{"sysctl empty key", base(0, rec(bootstrap.RecUTS, []byte("\x00\x00")), rec(bootstrap.RecSysctl, []byte("\x00b\x00"))), "SYSCTL: string 0 empty"},
		{"too many sysctls", base(0, rec(bootstrap.RecUTS, []byte("\x00\x00")), rec(bootstrap.RecSysctl, bytes.Repeat([]byte("a\x00b\x00"), 4097))), "SYSCTL: 4097 sysctls, over 4096"},
		{"long sysctl value", base(0, rec(bootstrap.RecUTS, []byte("\x00\x00")), rec(bootstrap.RecSysctl, append(append([]byte("a\x00"), bytes.Repeat([]byte("v"), 4096)...), 0))), "SYSCTL: string 1 empty (a key) or of 4096 bytes or more"},
		{"masked without rootfs", base(0, rec(bootstrap.RecMasked, []byte("/a\x00"))), "without ROOTFS"},
		{"rootfs flags", base(0, rec(bootstrap.RecRootfs, u32(4))), "ROOTFS: unknown flags 0x4"},
		{"rootfs short", base(0, rec(bootstrap.RecRootfs, []byte{1})), "ROOTFS: 1 bytes, want flags"},
		{"read-only /dev without a name", base(0, rec(bootstrap.RecRootfs, u32(1))), "ROOTFS: want one non-empty"},
		{"a name without a read-only /dev", base(0, rec(bootstrap.RecRootfs, append(u32(2), "x\x00"...))), "ROOTFS: 6 bytes, want 4"},
		{"relative masked path", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecMasked, []byte("/a\x00proc\x00"))), "MASKED: path 1 is not a clean absolute path"},
		{"masked path with ..", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecMasked, []byte("/a/../etc\x00"))), "MASKED: path 0 is not a clean"},
		{"masked path with //", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecMasked, []byte("//etc\x00"))), "MASKED: path 0 is not a clean"},
		{"read-only path ending in /", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecRdonly, []byte("/etc/\x00"))), "RDONLY: path 0 is not a clean"},
		{"read-only path ending in /.", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecRdonly, []byte("/etc/.\x00"))), "RDONLY: path 0 is not a clean"},
		{"long path", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecRdonly, append([]byte("/"+strings.Repeat("a", 4095)), 0))), "RDONLY: path 0 is not a clean absolute path under 4096 bytes"},
		{"too many paths", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecMasked, bytes.Repeat([]byte("/a\x00"), 4097))), "MASKED: 4097 paths, over 4096"},
		{"mount label", base(0, rec(bootstrap.RecRootfs, u32(0)), rec(bootstrap.RecMountLabel, append(bytes.Repeat([]byte("a"), 4096), 0))), "MOUNT_LABEL: 4097 bytes, over a page"},
	} {
		_, err := ParsePlan(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// FuzzParseExecPlan: the plan parser (plan.c) against random input. No
// input may make it read one record's bytes as another field: whatever it
// accepts, a reference decoder written apart (refPlan, in Go) decodes to
// the same plan field by field, every field a byte-exact copy of its own
// record's payload. And any plan made from the input encodes and parses
// back to itself.
func FuzzParseExecPlan(f *testing.F) {
	f.Add(encode(f, fullPlan()))
	f.Add(encode(f, &bootstrap.Plan{Args: []string{"x"}, Cwd: "/"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParsePlan(b)
		if err == nil {
			want, rerr := refPlan(b)
			if rerr != nil {
				t.Fatalf("C accepted what the reference refuses (%v): %x", rerr, b)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("C parsed\n%+v\nthe reference\n%+v", got, want)
			}
		}
		p := planFrom(b)
		back, err := ParsePlan(encode(t, p))
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", back, p)
		}
	})
}

// TestCapNames: the launcher names each capability as config.json and
// libcontainer/caps do, and one it does not know as "cap(N)".
func TestCapNames(t *testing.T) {
	for v := 0; v < 64; v++ {
		if got, want := CapName(uint32(v)), caps.Name(v); got != want {
			t.Errorf("capability %d: launcher says %q, caps.Name %q", v, got, want)
		}
	}
}

// TestEveryRecordEverywhere: each record on bootstrap.h's list
// (bootstrap.PlanRecords) is written by the encoder (plan.go), read by
// the C parser (plan.c) and by the reference decoder (refPlan), and
// made by the round trip's and the fuzz target's plans (fullPlan,
// planFrom); and every field of bootstrap.Plan is set in both, so a
// field without a record fails too. Adding a process attribute cannot
// be half done.
func TestEveryRecordEverywhere(t *testing.T) {
	records := bootstrap.PlanRecords()
	if len(records) == 0 {
		t.Fatal("bootstrap.PlanRecords is empty")
	}
	for _, c := range []struct {
		name string
		plan *bootstrap.Plan
	}{
		{"fullPlan (the round trip)", fullPlan()},
		{"planFrom (the fuzz target's round trip)", planFrom(bytes.Repeat([]byte{0xfd}, 4096))},
	} {
		v := reflect.ValueOf(c.plan).Elem()
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).IsZero() {
				t.Errorf("%s leaves Plan.%s unset", c.name, v.Type().Field(i).Name)
			}
		}
		b := encode(t, c.plan)
		have := map[int]bool{}
		for off := 0; off+8 <= len(b); {
			n := int(binary.NativeEndian.Uint32(b[off+4:]))
			have[int(binary.NativeEndian.Uint32(b[off:]))] = true
			off += 8 + (n+7)/8*8
		}
		for _, r := range records {
			if !have[r.Type] {
				t.Errorf("%s: no record %s (%d) in what (*Plan).Encode wrote: the encoder or the plan lacks it", c.name, r.Name, r.Type)
			}
		}
		if got, err := ParsePlan(b); err != nil {
			t.Errorf("%s: the C parser (plan.c): %v", c.name, err)
		} else if !reflect.DeepEqual(got, c.plan) {
			t.Errorf("%s: the C parser (plan.c, parse.go) gave\n%+v\nwant\n%+v", c.name, got, c.plan)
		}
		if got, err := refPlan(b); err != nil {
			t.Errorf("%s: the reference decoder (refPlan): %v", c.name, err)
		} else if !reflect.DeepEqual(got, c.plan) {
			t.Errorf("%s: the reference decoder gave\n%+v\nwant\n%+v", c.name, got, c.plan)
		}
	}
	// The C parser names each record as the list does, and knows no other.
	known := map[int]bool{}
	for _, r := range records {
		known[r.Type] = true
		_, err := ParsePlan(append(rec(r.Type, make([]byte, 3)), rec(r.Type, make([]byte, 3))...))
		if err == nil || !strings.Contains(err.Error(), "record "+r.Name) {
			t.Errorf("record %s: the C parser says %v", r.Name, err)
		}
	}
	for typ := 0; typ < 40; typ++ {
		if _, err := ParsePlan(rec(typ, nil)); !known[typ] && (err == nil || !strings.Contains(err.Error(), "unknown record type")) {
			t.Errorf("type %d is not on the list, the C parser says %v", typ, err)
		}
	}
}

// TestEveryPlanFieldIsUsed: each field of struct husk_plan (launch.h) that
// plan.c fills is read by a launcher step (a .c file other than plan.c):
// a record parsed but never applied fails here.
func TestEveryPlanFieldIsUsed(t *testing.T) {
	comments := regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return comments.ReplaceAllString(string(b), "")
	}
	h := read("launch.h")
	start := strings.Index(h, "struct husk_plan {")
	if start < 0 {
		t.Fatal("launch.h: no struct husk_plan")
	}
	body := h[start+len("struct husk_plan {"):]
	body = body[:strings.Index(body, "};")]
	steps, err := filepath.Glob("*.c")
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	for _, f := range steps {
		if f != "plan.c" {
			code.WriteString(read(f))
		}
	}
	ident := regexp.MustCompile(`(\w+)\s*(\[[^\]]*\])?\s*$`)
	n := 0
	for _, decl := range strings.Split(body, ";") {
		for _, part := range strings.Split(decl, ",") {
			m := ident.FindStringSubmatch(strings.TrimSpace(part))
			// buf is the parser's own copy of the frame; argc the count
			// of argv (NULL-terminated for execve) for parse.go's copy.
			if m == nil || m[1] == "buf" || m[1] == "argc" {
				continue
			}
			n++
			if !regexp.MustCompile(`(->|\.)` + m[1] + `\b`).MatchString(code.String()) {
				t.Errorf("struct husk_plan's %s is read by no launcher step (nsenter/*.c but plan.c)", m[1])
			}
		}
	}
	if n < 30 {
		t.Errorf("found only %d fields in struct husk_plan: is the check still reading launch.h?", n)
	}
}
