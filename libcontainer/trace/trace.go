// Package trace records when a husk process reaches each phase of a
// container's start, so that "why is my pod slow to start" has an answer
// in milliseconds per phase (see the README, "Where a start's time goes").
//
// A mark ends a phase: Mark("rootfs") says the rootfs phase ended now.
// Each mark is one JSON line (Record) carrying the CLOCK_MONOTONIC time,
// which is system-wide, so the records of husk's processes (create, its
// `husk init`, start, delete, ...) merge into one timeline; Record.Ms is
// the time since the same process's previous mark.
//
// Tracing is off unless either
//   - HUSK_TRACE names a file: every husk process appends its records
//     there (a `husk init` sends its own to the parent, which appends
//     them: init may live in another mount namespace);
//   - or --debug is given: each mark is also a debug log record with the
//     fields phase and ms (in the --log file, as containerd keeps it).
//
// HUSK_TRACE_T0, optional, is the caller's CLOCK_MONOTONIC time in
// nanoseconds just before it started husk (the benchmark sets it): the
// first mark, "exec", then covers execve and the dynamic loader.
//
// When tracing is off, a mark costs a branch.
package trace

/*
#include <time.h>

// husk_trace_ctor_ns is when the first C constructor ran: after execve
// and the dynamic loader, before nsexec and the Go runtime.
long long husk_trace_ctor_ns;

__attribute__((constructor(101))) static void husk_trace_ctor(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		husk_trace_ctor_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// The environment that turns tracing on.
const (
	EnvFile = "HUSK_TRACE"    // file the records are appended to
	EnvT0   = "HUSK_TRACE_T0" // the caller's CLOCK_MONOTONIC ns at exec
	// envChild tells a `husk init` to send its records to its parent.
	envChild = "HUSK_TRACE_CHILD"
)

// Record is one mark: process Proc (its command: run, create, init, ...)
// with pid Pid ended phase Phase at T, Ms after its previous mark.
type Record struct {
	T     int64   `json:"t"` // CLOCK_MONOTONIC, ns
	Pid   int     `json:"pid"`
	Proc  string  `json:"proc"`
	Phase string  `json:"phase"`
	Ms    float64 `json:"ms"`
}

// wire wraps a record a `husk init` writes to its log pipe, so the parent
// can tell it from a log line (see Forward).
type wire struct {
	Trace *Record `json:"husk_trace"`
}

var state struct {
	sync.Mutex
	once  sync.Once
	proc  string
	last  int64     // time of the previous mark (0: none yet)
	out   io.Writer // nil: no records written
	debug bool      // log marks at debug level
	// child: this is a `husk init` whose records go to its log pipe;
	// until SetOutput gives it, they wait in pending.
	child   bool
	pending [][]byte
}

// Now is the CLOCK_MONOTONIC time in nanoseconds.
func Now() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// Start names this process (its command) and records its first marks:
// "exec" (from HUSK_TRACE_T0 to the first C constructor, when the caller
// set it) and "main" (the Go runtime's boot and package initialisers, up
// to now). Call it once, as early in main as the command is known.
func Start(proc string) {
	state.Lock()
	state.proc = proc
	state.Unlock()
	if !Enabled() {
		return
	}
	ctor := ctorNs()
	if t0, err := strconv.ParseInt(os.Getenv(EnvT0), 10, 64); err == nil && t0 > 0 && ctor >= t0 {
		markAt("exec", t0, ctor)
	}
	if ctor > 0 {
		markAt("main", ctor, Now())
	} else {
		Mark("main")
	}
}

// Enabled reports whether marks are recorded or logged.
func Enabled() bool {
	setup()
	return state.out != nil || state.debug || state.child
}

func setup() {
	state.once.Do(func() {
		state.debug = logrus.IsLevelEnabled(logrus.DebugLevel)
		if os.Getenv(envChild) != "" {
			state.child = true // SetOutput gives init its log pipe
			return
		}
		if path := os.Getenv(EnvFile); path != "" {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				logrus.Warnf("%s=%s: %v (tracing off)", EnvFile, path, err)
				return
			}
			state.out = f
		}
	})
}

// SetDebug turns debug logging of marks on or off; main calls it once the
// --debug flag is parsed.
func SetDebug(on bool) {
	setup()
	state.Lock()
	state.debug = on
	state.Unlock()
}

// Mark records that phase ended now.
func Mark(phase string) {
	if !Enabled() {
		return
	}
	now := Now()
	state.Lock()
	last := state.last
	state.Unlock()
	if last == 0 {
		last = now
	}
	markAt(phase, last, now)
}

// markAt records phase as running from since to t.
func markAt(phase string, since, t int64) {
	state.Lock()
	defer state.Unlock()
	rec := Record{T: t, Pid: os.Getpid(), Proc: state.proc, Phase: phase, Ms: float64(t-since) / 1e6}
	state.last = t
	if state.debug && !state.child {
		logrus.WithFields(logrus.Fields{"phase": phase, "ms": rec.Ms}).Debugf("trace: %s %s", state.proc, phase)
	}
	var data []byte
	if state.child {
		data, _ = json.Marshal(wire{Trace: &rec})
	} else {
		data, _ = json.Marshal(&rec)
	}
	data = append(data, '\n')
	if state.out == nil {
		if state.child {
			state.pending = append(state.pending, data)
		}
		return
	}
	// One write per record: O_APPEND keeps concurrent writers' lines whole.
	state.out.Write(data)
}

// ChildEnv is the environment a `husk init` needs to send its marks to
// its parent (nil when tracing is off).
func ChildEnv() []string {
	if !Enabled() {
		return nil
	}
	return []string{envChild + "=1"}
}

// SetOutput makes a `husk init` started with ChildEnv write its records
// to its log pipe w, which the parent reads with Forward.
func SetOutput(w io.Writer) {
	setup()
	state.Lock()
	defer state.Unlock()
	if !state.child {
		return
	}
	state.out = w
	for _, data := range state.pending {
		w.Write(data)
	}
	state.pending = nil
}

// Forward takes a line from a `husk init`'s log pipe and, if it is a
// trace record, records it in this process's trace and reports true.
func Forward(line []byte) bool {
	var w wire
	if !bytes.HasPrefix(line, []byte(`{"husk_trace":`)) || json.Unmarshal(line, &w) != nil || w.Trace == nil {
		return false
	}
	rec := *w.Trace
	setup()
	state.Lock()
	defer state.Unlock()
	if state.debug {
		logrus.WithFields(logrus.Fields{"phase": rec.Phase, "ms": rec.Ms}).Debugf("trace: %s %s", rec.Proc, rec.Phase)
	}
	if state.out != nil {
		data, _ := json.Marshal(&rec)
		state.out.Write(append(data, '\n'))
	}
	return true
}

// ctorNs is when the first C constructor ran (CLOCK_MONOTONIC ns).
func ctorNs() int64 { return int64(C.husk_trace_ctor_ns) }
