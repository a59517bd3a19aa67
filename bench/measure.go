package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sample is one timed command: wall time from just before exec to wait's
// return, and the CPU time and peak RSS wait4 reports for the command
// (with the children it reaped itself: `run` reaps its container).
type sample struct {
	wall   time.Duration
	cpu    time.Duration
	sys    time.Duration // the kernel's part of cpu
	maxRSS int64         // KiB
}

// runtime is one OCI runtime under test with its own state root.
type runtime struct {
	name string
	bin  string
	root string
	// Samples per benchmark row (see rows in report.go).
	s map[string][]sample
	// Other per-runtime figures, one value per measurement.
	v map[string][]float64
}

func newRuntime(name, bin, root string) *runtime {
	return &runtime{name: name, bin: bin, root: root, s: map[string][]sample{}, v: map[string][]float64{}}
}

func (r *runtime) add(row string, s sample)       { r.s[row] = append(r.s[row], s) }
func (r *runtime) addValue(row string, v float64) { r.v[row] = append(r.v[row], v) }

// command is `RUNTIME --root R args...`.
func (r *runtime) command(args ...string) *exec.Cmd {
	return exec.Command(r.bin, append([]string{"--root", r.root}, args...)...)
}

// id is a fresh container id for this runtime.
func (r *runtime) id(tag string, i int) string {
	return fmt.Sprintf("b-%s-%d-%s%d", r.name, os.Getpid(), tag, i)
}

// monotonicNow is CLOCK_MONOTONIC in ns, the clock of husk's trace.
func monotonicNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// timed runs cmd with stdin on /dev/null and its output in a temp file (a
// detached container must not hold a pipe of ours), and measures it.
// env, if any, is added to the environment; span (if not nil) receives
// the CLOCK_MONOTONIC times just before the exec and just after the wait.
func timed(cmd *exec.Cmd, env []string, span *[2]int64) (sample, error) {
	out, err := os.CreateTemp("", "husk-bench-out-")
	if err != nil {
		return sample{}, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	start := time.Now()
	if span != nil {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		span[0] = monotonicNow()
		cmd.Env = append(cmd.Env, "HUSK_TRACE_T0="+strconv.FormatInt(span[0], 10))
	}
	err = cmd.Run()
	wall := time.Since(start)
	if span != nil {
		span[1] = monotonicNow()
	}
	if err != nil {
		msg, _ := os.ReadFile(out.Name())
		return sample{}, fmt.Errorf("%v: %w: %s", cmd.Args, err, bytes.TrimSpace(msg))
	}
	return usage(cmd, wall), nil
}

// usage is the sample of a command that has been waited for.
func usage(cmd *exec.Cmd, wall time.Duration) sample {
	s := sample{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.sys = time.Duration(ru.Stime.Nano())
		s.maxRSS = ru.Maxrss
	}
	return s
}

// vmHWM is the peak RSS of process pid in KiB, from /proc/PID/status.
func vmHWM(pid int) (int64, error) { return procKiB(fmt.Sprintf("/proc/%d/status", pid), "VmHWM:") }

// procKiB is the figure (in KiB) after key in a /proc file of "key: N kB"
// lines (status, smaps_rollup).
func procKiB(file, key string) (int64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			f := bytes.Fields(v)
			if len(f) > 0 {
				return strconv.ParseInt(string(f[0]), 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("%s: no %s", file, key)
}

// dirKiB is the space the files under dir take (allocated blocks), in KiB.
func dirKiB(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			return err
		}
		total += st.Blocks * 512
		return nil
	})
	return total / 1024, err
}
