package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// reset forgets what setup saw, so a test can change the environment.
func reset(t *testing.T) {
	t.Helper()
	state.Lock()
	state.once = sync.Once{}
	state.proc, state.last, state.out, state.debug, state.child, state.pending = "", 0, nil, false, false, nil
	state.Unlock()
}

// records reads the JSON lines of path.
func records(t *testing.T, data []byte) []Record {
	t.Helper()
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// checkOrder fails unless recs have the phases want, in order, in one
// process, with times that never go back and non-negative durations.
func checkOrder(t *testing.T, recs []Record, proc string, want ...string) {
	t.Helper()
	if len(recs) != len(want) {
		t.Fatalf("got %d records %+v, want phases %v", len(recs), recs, want)
	}
	for i, r := range recs {
		if r.Phase != want[i] || r.Proc != proc || r.Pid != os.Getpid() {
			t.Errorf("record %d = %+v, want phase %q of %s, pid %d", i, r, want[i], proc, os.Getpid())
		}
		if r.Ms < 0 {
			t.Errorf("record %d (%s): negative duration %v ms", i, r.Phase, r.Ms)
		}
		if i > 0 && r.T < recs[i-1].T {
			t.Errorf("record %d (%s) at %d is before record %d at %d", i, r.Phase, r.T, i-1, recs[i-1].T)
		}
		if i > 0 && r.Ms*1e6 > float64(r.T-recs[i-1].T)+1 {
			t.Errorf("record %d (%s): %v ms is more than the time since the previous mark", i, r.Phase, r.Ms)
		}
	}
}

func TestOffByDefault(t *testing.T) {
	t.Setenv(EnvFile, "")
	t.Setenv(envChild, "")
	reset(t)
	if Enabled() {
		t.Fatal("tracing on with no HUSK_TRACE and no --debug")
	}
	Start("run")
	Mark("config")
	if ChildEnv() != nil {
		t.Errorf("ChildEnv = %v with tracing off", ChildEnv())
	}
}

func TestFileMarks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(EnvFile, path)
	t.Setenv(envChild, "")
	t0 := Now()
	t.Setenv(EnvT0, strconv.FormatInt(t0, 10))
	reset(t)
	// The constructor ran before this test; a T0 after it is ignored.
	Start("create")
	Mark("config")
	Mark("cgroups")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := records(t, data)
	checkOrder(t, recs, "create", "main", "config", "cgroups")
	if env := ChildEnv(); len(env) != 1 || env[0] != envChild+"=1" {
		t.Errorf("ChildEnv = %v", env)
	}
}

func TestExecMarkFromT0(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(EnvFile, path)
	t.Setenv(envChild, "")
	// A caller that started the process before its C constructor ran.
	t.Setenv(EnvT0, strconv.FormatInt(int64(ctorNs())-1000, 10))
	reset(t)
	Start("run")
	data, _ := os.ReadFile(path)
	recs := records(t, data)
	checkOrder(t, recs, "run", "exec", "main")
	if recs[0].Ms != 0.001 {
		t.Errorf("exec took %v ms, want 0.001 (T0 is 1µs before the constructor)", recs[0].Ms)
	}
}

func TestChildForwardsThroughParent(t *testing.T) {
	// The child: records wait until its log pipe is known.
	t.Setenv(envChild, "1")
	t.Setenv(EnvFile, "")
	reset(t)
	Start("init")
	Mark("init-config")
	var pipe bytes.Buffer
	SetOutput(&pipe)
	Mark("rootfs")
	lines := bytes.Split(bytes.TrimSpace(pipe.Bytes()), []byte("\n"))

	// The parent: trace lines are recorded, log lines are not.
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(envChild, "")
	t.Setenv(EnvFile, path)
	reset(t)
	if Forward([]byte(`{"level":"info","msg":"hello"}`)) {
		t.Error("Forward took a log line")
	}
	for _, l := range lines {
		if !Forward(l) {
			t.Errorf("Forward refused %q", l)
		}
	}
	data, _ := os.ReadFile(path)
	checkOrder(t, records(t, data), "init", "main", "init-config", "rootfs")
}

func TestSetOutputIgnoredOutsideInit(t *testing.T) {
	t.Setenv(envChild, "")
	t.Setenv(EnvFile, "")
	reset(t)
	var pipe bytes.Buffer
	SetOutput(&pipe)
	Mark("x")
	if pipe.Len() != 0 {
		t.Errorf("a process not started by a traced parent wrote %q", pipe.String())
	}
}
