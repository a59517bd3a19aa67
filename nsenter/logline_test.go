package nsenter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/trace"
)

// pipeEnv makes a pipe whose write end init's env variable name names.
func pipeEnv(t *testing.T, name string) *bufio.Reader {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	t.Setenv(name, strconv.Itoa(int(w.Fd())))
	return bufio.NewReader(r)
}

// TestLogLineContract: what the launcher's husk_logf writes (bootstrap.h's
// HUSK_LOG_LINE_*) is what the parent reads (bootstrap.ParseLogLine,
// IsDebugLogLine), escapes and control characters included.
func TestLogLineContract(t *testing.T) {
	r := pipeEnv(t, bootstrap.EnvLogPipe)
	t.Setenv(bootstrap.EnvLogDebug, "1")
	for _, c := range []struct{ level, msg, want string }{
		{"warning", `a "quoted" \ path`, `a "quoted" \ path`},
		{"debug", "two\nlines\t", "two lines "},
		{"error", "", ""},
	} {
		WriteLogLine(c.level, c.msg)
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		got, err := bootstrap.ParseLogLine(line)
		if err != nil {
			t.Fatal(err)
		}
		if got != (bootstrap.LogLine{Level: c.level, Msg: c.want}) {
			t.Errorf("husk_logf(%q, %q) wrote %q, read as %+v", c.level, c.msg, line, got)
		}
		if bootstrap.IsDebugLogLine(line) != (c.level == "debug") {
			t.Errorf("%q: IsDebugLogLine says %v", line, !(c.level == "debug"))
		}
	}
}

// TestTraceContract: the launcher's marks (HUSK_TRACE_RECORD, on the fd
// bootstrap.EnvTraceFd names) decode as trace.Record, and trace reads
// that fd's name from the contract.
func TestTraceContract(t *testing.T) {
	if trace.EnvFd != bootstrap.EnvTraceFd {
		t.Fatalf("trace.EnvFd %q, the contract's %q", trace.EnvFd, bootstrap.EnvTraceFd)
	}
	r := pipeEnv(t, bootstrap.EnvTraceFd)
	Mark("contract")
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var rec trace.Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if rec.Proc != "init" || rec.Phase != "contract" || rec.Pid != os.Getpid() || rec.T <= 0 {
		t.Errorf("%q read as %+v", line, rec)
	}
}
