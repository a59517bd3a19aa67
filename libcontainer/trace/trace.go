// Package trace records when a husk process reaches each phase of a
// container's start, so that "why is my pod slow to start" has an answer
// in milliseconds per phase (see docs/tracing.md).
//
// A mark ends a phase: Mark("rootfs") says the rootfs phase ended now.
// Each mark is one JSON line (Record) carrying the CLOCK_MONOTONIC time,
// which is system-wide, so the records of husk's processes (create, its
// `husk init`, start, delete, ...) merge into one timeline; Record.Ms is
// the time since the same process's previous mark.
//
// Tracing is off unless either
//   - HUSK_TRACE names a file: every husk process appends its records
//     there (a `husk init` through an fd of it its parent passes, see
//     ChildFile: init may live in another mount namespace);
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

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"golang.org/x/sys/unix"
)

// The environment that turns tracing on.
const (
	EnvFile = "HUSK_TRACE"    // file the records are appended to
	EnvT0   = "HUSK_TRACE_T0" // the caller's CLOCK_MONOTONIC ns at exec
	// EnvFd names the fd of the trace file a `husk init` inherits: the
	// contract's (bootstrap.h), as the launcher writes its marks there too.
	EnvFd = bootstrap.EnvTraceFd
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

var state struct {
	sync.Mutex
	once  sync.Once
	proc  string
	last  int64     // time of the previous mark (0: none yet)
	out   io.Writer // nil: no records written
	debug bool      // log marks at debug level
	// sink, with --debug and no HUSK_TRACE, is a memfd that a `husk init`
	// appends its records to; read is how far this process has logged it.
	sink *os.File
	read int64
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
	return state.out != nil || state.debug
}

func setup() {
	state.once.Do(func() {
		state.debug = logrus.IsLevelEnabled(logrus.DebugLevel)
		if state.proc == "init" {
			// Only the fd its parent passed: nothing in init's
			// environment but what the parent put there.
			if fd, err := strconv.Atoi(os.Getenv(EnvFd)); err == nil && fd > 2 {
				unix.CloseOnExec(fd)
				state.out = os.NewFile(uintptr(fd), "trace")
			}
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
	if state.debug {
		logSink()
		logRecord(&rec)
	}
	if state.out == nil {
		return
	}
	data, _ := json.Marshal(&rec)
	// One write per record: O_APPEND keeps concurrent writers' lines whole.
	state.out.Write(append(data, '\n'))
}

func logRecord(rec *Record) {
	logrus.WithFields(logrus.Fields{"phase": rec.Phase, "ms": rec.Ms}).Debugf("trace: %s %s", rec.Proc, rec.Phase)
}

// logSink logs the records a `husk init` has added to the sink since the
// last call (with state locked).
func logSink() {
	if state.sink == nil {
		return
	}
	var buf [4096]byte
	for {
		n, err := unix.Pread(int(state.sink.Fd()), buf[:], state.read)
		if n <= 0 || err != nil {
			return
		}
		chunk := buf[:n]
		end := bytes.LastIndexByte(chunk, '\n')
		if end < 0 {
			return // half a line: the rest comes later
		}
		for _, line := range bytes.Split(chunk[:end], []byte("\n")) {
			var rec Record
			if json.Unmarshal(line, &rec) == nil {
				logRecord(&rec)
			}
		}
		state.read += int64(end + 1)
	}
}

// ChildFile is a copy of the trace file's fd for a `husk init` to inherit
// as EnvFd; with --debug and no trace file, of a memfd whose records this
// process logs at its next mark. nil when tracing is off. The caller closes it once init
// has started; init's copy is close-on-exec.
func ChildFile() *os.File {
	setup()
	state.Lock()
	defer state.Unlock()
	f, ok := state.out.(*os.File)
	if !ok || f == nil {
		if !state.debug || state.proc == "init" {
			return nil
		}
		if state.sink == nil {
			fd, err := unix.MemfdCreate("husk-trace", unix.MFD_CLOEXEC)
			if err != nil {
				return nil
			}
			state.sink = os.NewFile(uintptr(fd), "husk-trace")
		}
		f = state.sink
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "trace")
}

// ctorNs is when the first C constructor ran (CLOCK_MONOTONIC ns).
func ctorNs() int64 { return int64(C.husk_trace_ctor_ns) }
