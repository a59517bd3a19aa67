package configs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// fullConfig has every part that encodes itself (lazyjson.go) set, with
// texts encoding/json escapes (HTML characters, non-ASCII).
func fullConfig() *Config {
	errno := uint(1)
	return &Config{
		OCIVersion: "1.0.2",
		Rootfs:     "/b/rootfs",
		Mounts: []*Mount{{Source: "/src", Destination: "/dst", Device: "bind", Flags: msBind,
			IDMap: &MountIDMap{UIDMappings: []IDMap{{0, 1000, 1}}, Recursive: true}}},
		Process: &Process{
			Args:        []string{"sh", "-c", "a<b && c>d"},
			ConsoleSize: &ConsoleSize{Height: 24, Width: 80},
			Scheduler:   &Scheduler{Policy: 1, Priority: 5},
			IOPriority:  &IOPriority{Class: 2, Priority: 4},
			CPUAffinity: &CPUAffinity{Initial: []int{0}, Final: []int{0, 1}},
		},
		Seccomp: &Seccomp{DefaultAction: "SCMP_ACT_ERRNO", DefaultErrnoRet: &errno,
			Syscalls: []*Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_ALLOW",
				Args: []*SeccompArg{{Index: 1, Value: 2, Op: "SCMP_CMP_EQ"}}}},
			Program: &SeccompProgram{Filter: []byte{1, 2, 3}, Flags: 1}},
		Personality:  &Personality{Persona: 8},
		MemoryPolicy: &MemoryPolicy{Mode: 1, Nodes: []int{0}},
		IntelRdt:     &IntelRdt{ClosID: "é<x>"},
		Cgroup: &Cgroup{Path: "/husk/<a&b>", SystemdProps: map[string]string{"A": "1"},
			Resources: Resources{Devices: DefaultDeviceRules(), PidsLimit: ptr(int64(10))}},
	}
}

func ptr[T any](v T) *T { return &v }

func TestLazyJSONRoundTrip(t *testing.T) {
	in := fullConfig()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Config
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, &out) {
		t.Errorf("round trip differs:\n in %+v\nout %+v", in, &out)
	}
}

// Each part's JSON is what encoding/json makes of the same type without
// methods, HTML escaping included: the format of state.json and of the
// config sent to init is unchanged.
func TestLazyJSONSameAsPlain(t *testing.T) {
	c := fullConfig()
	pairs := []struct {
		name        string
		lazy, plain any
	}{
		{"cgroup", c.Cgroup, (*plainCgroup)(c.Cgroup)},
		{"seccomp", c.Seccomp, (*plainSeccomp)(c.Seccomp)},
		{"personality", c.Personality, (*plainPersonality)(c.Personality)},
		{"memory policy", c.MemoryPolicy, (*plainMemoryPolicy)(c.MemoryPolicy)},
		{"intel rdt", c.IntelRdt, (*plainIntelRdt)(c.IntelRdt)},
		{"mount idmap", c.Mounts[0].IDMap, (*plainMountIDMap)(c.Mounts[0].IDMap)},
		{"scheduler", c.Process.Scheduler, (*plainScheduler)(c.Process.Scheduler)},
		{"io priority", c.Process.IOPriority, (*plainIOPriority)(c.Process.IOPriority)},
		{"cpu affinity", c.Process.CPUAffinity, (*plainCPUAffinity)(c.Process.CPUAffinity)},
		{"console size", c.Process.ConsoleSize, (*plainConsoleSize)(c.Process.ConsoleSize)},
	}
	for _, p := range pairs {
		// Inside a struct field, as in a Config.
		lazy, err1 := json.Marshal(struct{ V any }{p.lazy})
		plain, err2 := json.Marshal(struct{ V any }{p.plain})
		if err1 != nil || err2 != nil || !bytes.Equal(lazy, plain) {
			t.Errorf("%s: %s (%v) != %s (%v)", p.name, lazy, err1, plain, err2)
		}
	}
	if data, _ := json.Marshal(c.Cgroup); !bytes.Contains(data, []byte(`"path":"/husk/\u003ca\u0026b\u003e"`)) {
		t.Errorf("cgroup path not HTML-escaped as before: %s", data)
	}
}

// A null or absent part leaves the pointer nil, as without the methods.
func TestLazyJSONNullAndAbsent(t *testing.T) {
	c := fullConfig()
	data := []byte(`{"cgroup":null,"seccomp":null,"personality":null,"memory_policy":null,"intel_rdt":null,
		"process":{"args":["x"],"scheduler":null,"io_priority":null,"cpu_affinity":null,"console_size":null},
		"mounts":[{"destination":"/d","idmap":null}]}`)
	if err := json.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	if c.Cgroup != nil || c.Seccomp != nil || c.Personality != nil || c.MemoryPolicy != nil || c.IntelRdt != nil ||
		c.Process.Scheduler != nil || c.Process.IOPriority != nil || c.Process.CPUAffinity != nil ||
		c.Process.ConsoleSize != nil || c.Mounts[0].IDMap != nil {
		t.Errorf("null did not clear every part: %+v %+v", c, c.Process)
	}
	out, err := json.Marshal(&Config{Process: &Process{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cgroup", "seccomp", "personality", "memory_policy", "intel_rdt", "scheduler", "io_priority", "cpu_affinity", "console_size"} {
		if bytes.Contains(out, []byte(`"`+key+`"`)) {
			t.Errorf("nil %s encoded: %s", key, out)
		}
	}
}

// A bad value inside a part is still an error.
func TestLazyJSONErrors(t *testing.T) {
	var c Config
	if err := json.Unmarshal([]byte(`{"cgroup":{"path":7}}`), &c); err == nil {
		t.Error("cgroup.path 7 decoded without error")
	}
	if err := json.Unmarshal([]byte(`{"seccomp":[1]}`), &c); err == nil {
		t.Error("seccomp [1] decoded without error")
	}
}
