package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// reset forgets what setup saw, so a test can change the environment.
func reset(t *testing.T) {
	t.Helper()
	state.Lock()
	state.once = sync.Once{}
	state.proc, state.last, state.out, state.debug, state.sink, state.read = "", 0, nil, false, nil, 0
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
	reset(t)
	if Enabled() {
		t.Fatal("tracing on with no HUSK_TRACE and no --debug")
	}
	Start("run")
	Mark("config")
	if f := ChildFile(); f != nil {
		t.Errorf("ChildFile = %v with tracing off", f.Name())
	}
}

func TestFileMarks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(EnvFile, path)
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
	f := ChildFile()
	if f == nil {
		t.Fatal("ChildFile = nil with a trace file")
	}
	f.Close()
}

func TestExecMarkFromT0(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(EnvFile, path)
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

func TestInitWritesToThePassedFd(t *testing.T) {
	// The parent's file, and the copy a `husk init` inherits.
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(EnvFile, path)
	reset(t)
	Start("run")
	f := ChildFile()
	if f == nil {
		t.Fatal("no ChildFile")
	}
	defer f.Close()
	// In init: HUSK_TRACE is ignored there (its environment is the
	// parent's to set), the fd is used.
	fd, err := unix.Dup(int(f.Fd())) // init's own copy, as exec gives it
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvFd, strconv.Itoa(fd))
	t.Setenv(EnvFile, filepath.Join(t.TempDir(), "ignored.json"))
	reset(t)
	Start("init")
	Mark("config")
	Mark("rootfs")
	data, _ := os.ReadFile(path)
	var initRecs []Record
	for _, r := range records(t, data) {
		if r.Proc == "init" {
			initRecs = append(initRecs, r)
		}
	}
	checkOrder(t, initRecs, "init", "main", "config", "rootfs")
}

func TestFdIgnoredOutsideInit(t *testing.T) {
	t.Setenv(EnvFile, "")
	t.Setenv(EnvFd, "1")
	reset(t)
	Start("run")
	if Enabled() {
		t.Error("a process other than init took " + EnvFd)
	}
}

func TestDebugLogsInitRecordsFromTheSink(t *testing.T) {
	t.Setenv(EnvFile, "")
	var log bytes.Buffer
	logrus.SetOutput(&log)
	logrus.SetLevel(logrus.DebugLevel)
	defer logrus.SetOutput(os.Stderr)
	defer logrus.SetLevel(logrus.InfoLevel)
	reset(t)
	Start("run")
	f := ChildFile()
	if f == nil {
		t.Fatal("no ChildFile with --debug")
	}
	defer f.Close()
	// init's records, the second one half written so far.
	f.Write([]byte(`{"t":5,"pid":1,"proc":"init","phase":"rootfs","ms":1.5}` + "\n" + `{"t":6,"pid":1,"proc":"init","phase":"se`))
	Mark("created")
	out := log.String()
	if !strings.Contains(out, "trace: init rootfs") || !strings.Contains(out, "trace: run created") {
		t.Fatalf("log %q lacks init's record or the parent's", out)
	}
	if strings.Contains(out, "init se") {
		t.Fatalf("half a line was logged: %q", out)
	}
	f.Write([]byte(`tup","ms":0.5}` + "\n"))
	Mark("exit")
	if !strings.Contains(log.String(), "trace: init setup") {
		t.Fatalf("the rest of the line was not logged: %q", log.String())
	}
}
