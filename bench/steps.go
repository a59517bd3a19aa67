package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The rows of the report with a sample per measurement.
const (
	rowRun      = "run-to-exit"
	rowCreate   = "create"
	rowStart    = "start"
	rowDelete   = "delete"
	rowExec     = "exec ID true"
	rowParallel = "parallel run-to-exit"
)

// The rows with one number per measurement.
const (
	valInitRSS = "peak RSS of init (VmHWM), MiB"
	// pid 1 waiting for start, before its exec: what a created container's
	// runtime side holds (its own pages: PSS shares the binary's).
	valInitRSSNow = "RSS of the waiting pid 1 (VmRSS), MiB"
	valInitPss    = "PSS of the waiting pid 1, MiB"
	// What stays on the host per running container once the runtime's
	// commands have exited: its state directory (on the state tmpfs: memory).
	valStateKiB = "state kept on the host per container, KiB"
	valBinary   = "binary size, MB"
	valSyscalls = "syscalls of one run (strace -f -c)"
	// The same without the Go runtime's thread parking and sysmon's naps,
	// which grow with the machine's load (and strace's own slowdown).
	valSyscallsOwn = "syscalls of one run without futex, nanosleep"
	valInits       = "Go package initialisers per process"
	valInitMs      = "time in package initialisers, ms"
)

// bench is one benchmark run: its options, bundle and runtimes.
type bench struct {
	o        options
	bundle   string
	work     string
	runtimes []*runtime
	traces   []traceRun // husk's traced runs
	// The floor of the parallel row (floor.go): its jobs, one sample per
	// batch each, and why a job was left out.
	floorJobs    []floorJob
	floorSamples [][]sample
	floorSkipped string
	churns       map[string][]churnResult // per runtime, one per -churn K
}

// traceRun is one traced `husk run`: its trace file and the bench's own
// CLOCK_MONOTONIC times around it.
type traceRun struct {
	file       string
	start, end int64
}

func (b *bench) warm() error {
	for i := 0; i < b.o.warmup; i++ {
		for _, r := range b.runtimes {
			if _, err := timed(r.command("run", "--bundle", b.bundle, r.id("warm", i)), nil, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// inTurn is the runtimes in the order of round i: each round starts with
// the next one. In a fixed order the first runtime of every round ran
// after the last one's teardown (its kworkers still freeing network
// namespaces, its cgroups being released): the same husk binary in two
// columns measured 4 to 16% slower in the first.
func (b *bench) inTurn(i int) []*runtime {
	n := len(b.runtimes)
	out := make([]*runtime, 0, n)
	for k := 0; k < n; k++ {
		out = append(out, b.runtimes[(i+k)%n])
	}
	return out
}

// rounds runs, per round and runtime: a run to exit; a create, start and
// delete; and for husk a traced run to exit.
func (b *bench) rounds() error {
	for i := 0; i < b.o.n; i++ {
		for _, r := range b.inTurn(i) {
			s, err := timed(r.command("run", "--bundle", b.bundle, r.id("run", i)), nil, nil)
			if err != nil {
				return err
			}
			r.add(rowRun, s)
			if err := b.lifecycle(r, r.id("life", i)); err != nil {
				return err
			}
			if r.name == "husk" {
				if err := b.tracedRun(r, i); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// lifecycle times create, start and delete of one container, and takes
// the peak RSS of its init between create and start.
func (b *bench) lifecycle(r *runtime, id string) error {
	s, err := timed(r.command("create", "--bundle", b.bundle, id), nil, nil)
	if err != nil {
		return err
	}
	r.add(rowCreate, s)
	st, err := state(r, id)
	if err != nil {
		return err
	}
	if hwm, err := vmHWM(st.Pid); err == nil {
		r.addValue(valInitRSS, float64(hwm)/1024)
	}
	if rss, err := procKiB(fmt.Sprintf("/proc/%d/status", st.Pid), "VmRSS:"); err == nil {
		r.addValue(valInitRSSNow, float64(rss)/1024)
	}
	if pss, err := procKiB(fmt.Sprintf("/proc/%d/smaps_rollup", st.Pid), "Pss:"); err == nil {
		r.addValue(valInitPss, float64(pss)/1024)
	}
	if kib, err := dirKiB(filepath.Join(r.root, id)); err == nil {
		r.addValue(valStateKiB, float64(kib))
	}
	if s, err = timed(r.command("start", id), nil, nil); err != nil {
		return err
	}
	r.add(rowStart, s)
	if err := waitStopped(r, id); err != nil {
		return err
	}
	if s, err = timed(r.command("delete", id), nil, nil); err != nil {
		return err
	}
	r.add(rowDelete, s)
	return nil
}

type ociState struct {
	Pid    int    `json:"pid"`
	Status string `json:"status"`
}

func state(r *runtime, id string) (*ociState, error) {
	out, err := r.command("state", id).Output()
	if err != nil {
		return nil, fmt.Errorf("%s state %s: %w", r.name, id, err)
	}
	var st ociState
	if err := json.Unmarshal(out, &st); err != nil {
		return nil, fmt.Errorf("%s state %s: %w", r.name, id, err)
	}
	return &st, nil
}

// waitStopped polls until the container's process (true) has exited.
func waitStopped(r *runtime, id string) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		st, err := state(r, id)
		if err != nil {
			return err
		}
		if st.Status == "stopped" {
			return nil
		}
	}
	return fmt.Errorf("%s: container %s did not stop", r.name, id)
}

// tracedRun runs the bundle to exit with HUSK_TRACE set.
func (b *bench) tracedRun(r *runtime, i int) error {
	file := filepath.Join(b.work, fmt.Sprintf("trace-%d.json", i))
	var span [2]int64
	if _, err := timed(r.command("run", "--bundle", b.bundle, r.id("trace", i)), []string{"HUSK_TRACE=" + file}, &span); err != nil {
		return err
	}
	b.traces = append(b.traces, traceRun{file: file, start: span[0], end: span[1]})
	return nil
}

// execs starts one sleeping container per runtime and times execs of
// `true` into each, interleaved.
func (b *bench) execs() error {
	if !b.o.exec {
		return nil
	}
	sleeper := filepath.Join(b.work, "bundle-sleep")
	if err := sleepBundle(b.bundle, sleeper); err != nil {
		return err
	}
	for _, r := range b.runtimes {
		id := r.id("exec", 0)
		if _, err := timed(r.command("run", "-d", "--bundle", sleeper, id), nil, nil); err != nil {
			return err
		}
		defer r.command("delete", "-f", id).Run()
	}
	for i := 0; i < b.o.warmup+b.o.n; i++ {
		for _, r := range b.inTurn(i) {
			s, err := timed(r.command("exec", r.id("exec", 0), "true"), nil, nil)
			if err != nil {
				return err
			}
			if i >= b.o.warmup {
				r.add(rowExec, s)
			}
		}
	}
	return nil
}

// parallelRuns starts o.parallel runs to exit at once per batch; a
// sample is the batch's wall time and the CPU time of all its runs.
func (b *bench) parallelRuns() error {
	if b.o.parallel <= 0 {
		return nil
	}
	for batch := 0; batch < b.o.batches; batch++ {
		for _, r := range b.inTurn(batch) {
			samples := make([]sample, b.o.parallel)
			errs := make([]error, b.o.parallel)
			var wg sync.WaitGroup
			start := time.Now()
			for j := range samples {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := r.id(fmt.Sprintf("par%d-", batch), j)
					samples[j], errs[j] = timed(r.command("run", "--bundle", b.bundle, id), nil, nil)
				}()
			}
			wg.Wait()
			total := sample{wall: time.Since(start)}
			for j, s := range samples {
				if errs[j] != nil {
					return errs[j]
				}
				total.cpu += s.cpu
				total.sys += s.sys
				total.maxRSS = max(total.maxRSS, s.maxRSS)
			}
			r.add(rowParallel, total)
		}
		for i, job := range b.floorJobs {
			s, err := floorBatch(job, b.o.parallel)
			if err != nil {
				return err
			}
			b.floorSamples[i] = append(b.floorSamples[i], s)
		}
	}
	return nil
}

func (b *bench) sizes() error {
	for _, r := range b.runtimes {
		st, err := os.Stat(r.bin)
		if err != nil {
			return err
		}
		r.addValue(valBinary, float64(st.Size())/1e6)
	}
	if h := find(b.runtimes, "husk"); h != nil {
		if st, err := os.Stat(filepath.Join(filepath.Dir(h.bin), "husk-cni")); err == nil {
			fmt.Printf("husk-cni (the CNI helper, run only for CNI networks): %.1f MB\n", float64(st.Size())/1e6)
		}
	}
	return nil
}

// syscalls counts the syscalls of three runs per runtime under strace.
func (b *bench) syscalls() error {
	if !b.o.strace {
		return nil
	}
	if _, err := exec.LookPath("strace"); err != nil {
		fmt.Println("note: no strace: syscall counts skipped (apt-get install strace)")
		return nil
	}
	for i := 0; i < 3; i++ {
		for _, r := range b.runtimes {
			out := filepath.Join(b.work, "strace-"+r.name)
			args := append([]string{"-f", "-c", "-o", out, r.bin, "--root", r.root}, "run", "--bundle", b.bundle, r.id("strace", i))
			if msg, err := exec.Command("strace", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("strace %s run: %w: %s", r.name, err, bytes.TrimSpace(msg))
			}
			data, err := os.ReadFile(out)
			if err != nil {
				return err
			}
			n, err := straceTotal(data)
			if err != nil {
				return fmt.Errorf("strace %s: %w", r.name, err)
			}
			r.addValue(valSyscalls, float64(n))
			r.addValue(valSyscallsOwn, float64(n-straceCalls(data, "futex", "nanosleep", "clock_nanosleep", "sched_yield")))
		}
	}
	return nil
}

// straceCalls sums the call counts strace -c gives the named syscalls.
func straceCalls(data []byte, names ...string) int {
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 5 || !slices.Contains(names, string(f[len(f)-1])) {
			continue
		}
		if c, err := strconv.Atoi(string(f[3])); err == nil {
			n += c
		}
	}
	return n
}

// straceTotal is the call count of strace -c's "total" line.
func straceTotal(data []byte) (int, error) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) >= 5 && string(f[len(f)-1]) == "total" {
			return strconv.Atoi(string(f[3]))
		}
	}
	return 0, fmt.Errorf("no total line in strace -c output")
}

// warnLeftovers prints a note when containers were left in r's root.
func warnLeftovers(r *runtime) {
	out, err := r.command("list", "-q").CombinedOutput()
	if err != nil {
		fmt.Printf("note: %s list: %v: %s\n", r.name, err, bytes.TrimSpace(out))
		return
	}
	if left := bytes.Fields(out); len(left) > 0 {
		fmt.Printf("note: %s left %d containers: %s\n", r.name, len(left), bytes.Join(left, []byte(" ")))
	}
}
