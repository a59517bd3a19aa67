package specconv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// plainDecode is what decodeLayered must equal: json.Unmarshal into a
// specs.Spec.
func plainDecode(data []byte) (*specs.Spec, error) {
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func checkLayered(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := plainDecode(data)
	got, err := decodeLayered(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%s: layered error %v, plain error %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s:\nlayered %s\nplain   %s", data, g, w)
	}
}

// layeredCases are the corner cases of matching and merging.
var layeredCases = []string{
	`{}`, `null`, `[]`, `5`, `{"ociVersion":"1.2.0"}`,
	`{"linux":null}`, `{"linux":{}}`, `{"linux":5}`, `{"linux":{"resources":null}}`,
	`{"Linux":{"Resources":{"Memory":{"limit":5}}}}`,
	`{"linux":{"resources":{"memory":{"limit":5}}},"linux":{"resources":{"memory":{"swap":6}}}}`,
	`{"linux":{"resources":{"memory":{"limit":5}}},"linux":null,"linux":{"sysctl":{"a":"b"}}}`,
	`{"linux":{"sysctl":{"a":"b"}},"LINUX":{"sysctl":{"c":"d"}}}`,
	`{"linux":{"resources":{"devices":[{"allow":false,"access":"rwm"}],"pids":{"limit":3},"unified":{"a":"1"}}}}`,
	`{"linux":{"resources":{"pids":{"limit":"x"}}}}`, `{"linux":{"resources":[]}}`,
	`{"linux":{"seccomp":{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["a"],"action":"SCMP_ACT_ALLOW"}]}}}`,
	`{"linux":{"seccomp":{"syscalls":[{"names":5}]}}}`,
	`{"linux":{"timeOffsets":{"monotonic":{"secs":1}},"netDevices":{"eth0":{"name":"x"}},"intelRdt":{"closID":"a"}}}`,
	`{"linux":{"memoryPolicy":{"mode":"MPOL_BIND","nodes":"0"},"personality":{"domain":"LINUX32"}}}`,
	`{"process":{"args":["a"],"cwd":"/","scheduler":{"policy":"SCHED_OTHER"},"ioPriority":{"class":"IOPRIO_CLASS_RT"}}}`,
	`{"process":{"consoleSize":{"height":1,"width":2},"execCPUAffinity":{"initial":"0"}},"process":{"args":["b"]}}`,
	`{"process":{"args":["a"]},"process":null}`, `{"process":{"user":{"uid":"x"}}}`, `{"process":{"scheduler":5}}`,
	`{"windows":{"layerFolders":["a"]},"vm":{"kernel":{"path":"k"}},"zos":{},"solaris":{},"freebsd":{}}`,
	`{"windows":5}`, `{"vm":{"kernel":5}}`,
	`{"hooks":{"prestart":[{"path":"/x"}]},"mounts":[{"destination":"/a"}],"annotations":{"a":"b"},"hostname":"h"}`,
	`{"ociVersion":"1.0.0","ociVersion":"1.2.0"}`, `{"unknown":{"linux":1},"linux":{"unknown":[1]}}`,
	`{"linux":{"resources":{"memory":{"limit":5}}}`, `{"process":`,
}

func TestDecodeLayeredMatches(t *testing.T) {
	for _, c := range layeredCases {
		checkLayered(t, []byte(c))
	}
	example, err := json.Marshal(Example())
	if err != nil {
		t.Fatal(err)
	}
	checkLayered(t, example)
	// The fuzz corpus: the configs of husk spec, runc spec, crun spec,
	// bad types, truncated files.
	files, _ := filepath.Glob("testdata/fuzz/FuzzConfig/*")
	if len(files) == 0 {
		t.Fatal("no corpus in testdata/fuzz/FuzzConfig")
	}
	for _, f := range files {
		data := corpusBytes(t, f)
		t.Run(filepath.Base(f), func(t *testing.T) { checkLayered(t, data) })
	}
}

// corpusBytes reads a Go fuzz corpus file ("go test fuzz v1" then one
// []byte("...") line).
func corpusBytes(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 2)
	if len(lines) < 2 {
		t.Fatalf("%s: not a corpus file", path)
	}
	arg := strings.TrimSpace(lines[1])
	arg = strings.TrimSuffix(strings.TrimPrefix(arg, "[]byte("), ")")
	s, err := strconv.Unquote(arg)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// Parse's errors are the plain decode's, position and field included.
func TestParseErrorsUnchangedByLayers(t *testing.T) {
	for _, c := range []string{`{"linux":{"resources":{"pids":{"limit":"x"}}}}`, `{"process":{"scheduler":5}}`, `{"linux":5}`} {
		_, err := Parse([]byte(c))
		_, plain := plainDecode([]byte(c))
		if err == nil || plain == nil || err.Error() != parseError([]byte(c), plain).Error() {
			t.Errorf("%s: Parse error %v, plain %v", c, err, plain)
		}
	}
}

func FuzzDecodeLayered(f *testing.F) {
	for _, c := range layeredCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLayered(t, data) })
}
