package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"
)

// traceRecord is one line of a HUSK_TRACE file (libcontainer/trace.Record).
type traceRecord struct {
	T     int64  `json:"t"`
	Proc  string `json:"proc"`
	Phase string `json:"phase"`
}

// phaseHelp says what each of husk's phases covers, for the table.
var phaseHelp = map[string]string{
	"run exec":       "execve of husk, dynamic loader, C constructors",
	"run main":       "Go runtime boot, package initialisers",
	"run config":     "read config.json, convert, validate, compile seccomp",
	"run prepare":    "state dir, lock, exec.fifo, cgroup paths, state.json",
	"run spawn":      "binary view, fds, fork+exec husk init",
	"run cgroups":    "cgroups made, init moved in, limits written",
	"run nsexec":     "bootstrap message; nsexec: namespaces, fork",
	"init main":      "Go runtime boot in init (after nsexec)",
	"init config":    "config received and decoded in init",
	"init rootfs":    "mounts, devices (up to the hooks)",
	"init hooks":     "createRuntime, createContainer hooks",
	"init setup":     "pivot_root, masks, console, hostname, sysctl",
	"init ready":     "rlimits, attributes, credentials, caps, cwd",
	"run created":    "READY received, state saved, pid file",
	"run fifo-wait":  "start: exec.fifo opened, init released",
	"init execve":    "startContainer hooks, seccomp, execve",
	"run container":  "the container's process runs and exits",
	"run teardown":   "delete: cgroups, state dir, poststop",
	"run exit":       "back in main",
	"(process exit)": "after husk's last mark: exit, reaping",
}

// phasesOf reads one traced run: each phase's time, from the previous mark
// of any process to this one (the trace of all of husk's processes merged
// on CLOCK_MONOTONIC), starting at the bench's exec and ending at its
// wait. The phases are returned in timeline order.
func phasesOf(r io.Reader, start, end int64) ([]string, map[string]time.Duration, error) {
	var recs []traceRecord
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec traceRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, nil, fmt.Errorf("trace line %q: %w", sc.Text(), err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].T < recs[j].T })
	var order []string
	d := map[string]time.Duration{}
	prev := start
	add := func(name string, dt int64) {
		if _, seen := d[name]; !seen {
			order = append(order, name)
		}
		d[name] += time.Duration(max(dt, 0))
	}
	for _, rec := range recs {
		add(rec.Proc+" "+rec.Phase, rec.T-prev)
		prev = max(prev, rec.T)
	}
	add("(process exit)", end-prev)
	return order, d, nil
}

// reportPhases prints each phase over the traced runs (median and
// trimmed mean), and checks the table against the measured (untraced)
// run-to-exit: the means of the phases add up to the mean traced run
// exactly, so their sum is compared with the untraced runs' mean and
// median. Means are trimmed (the highest and lowest tenth dropped): a
// shared machine's stalls land in one phase of one run, and would
// otherwise decide the table.
func reportPhases(w io.Writer, traces []traceRun, runs []sample) {
	var order []string
	all := map[string][]time.Duration{}
	var totals []time.Duration
	for _, tr := range traces {
		f, err := os.Open(tr.file)
		if err != nil {
			fmt.Fprintf(w, "note: trace %s: %v\n", tr.file, err)
			return
		}
		o, d, err := phasesOf(f, tr.start, tr.end)
		f.Close()
		if err != nil {
			fmt.Fprintf(w, "note: %v\n", err)
			return
		}
		order = mergeOrder(order, o)
		for name, v := range d {
			all[name] = append(all[name], v)
		}
		totals = append(totals, time.Duration(tr.end-tr.start))
	}
	n := len(traces)
	fmt.Fprintf(w, "\nhusk run-to-exit by phase (%d traced runs, HUSK_TRACE)\n", n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "process phase\tmedian ms\tmean ms (trimmed)\tshare\twhat")
	var sum time.Duration
	for _, name := range order {
		sum += mean(padded(all[name], n))
	}
	for _, name := range order {
		ds := padded(all[name], n)
		m := mean(ds)
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.0f%%\t%s\n", name, ms(median(ds)), ms(m), 100*float64(m)/float64(sum), phaseHelp[name])
	}
	tw.Flush()
	walls := make([]time.Duration, len(runs))
	for i, s := range runs {
		walls[i] = s.wall
	}
	fmt.Fprintf(w, "sum of the phase means %.2f ms (traced runs: median %.2f, trimmed mean %.2f)\n", ms(sum), ms(median(totals)), ms(mean(totals)))
	for _, c := range []struct {
		what string
		d    time.Duration
	}{{"trimmed mean", mean(walls)}, {"median", median(walls)}} {
		off := float64(sum-c.d) / float64(c.d)
		verdict := "within 10%"
		if off > 0.1 || off < -0.1 {
			verdict = "more than 10% off: a noisy run, try a larger -n"
		}
		fmt.Fprintf(w, "  vs the untraced run-to-exit %s %.2f ms: %+.0f%% (%s)\n", c.what, ms(c.d), 100*off, verdict)
	}
}

// mean is the mean of ds without its highest and lowest tenth.
func mean(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	cut := len(s) / 10
	s = s[cut : len(s)-cut]
	if len(s) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum / time.Duration(len(s))
}

// padded is ds with zeros for the runs in which a phase did not appear.
func padded(ds []time.Duration, n int) []time.Duration {
	for len(ds) < n {
		ds = append(ds, 0)
	}
	return ds
}

// mergeOrder appends the names of b that a lacks, after their predecessor.
func mergeOrder(a, b []string) []string {
	have := map[string]bool{}
	for _, n := range a {
		have[n] = true
	}
	for i, n := range b {
		if have[n] {
			continue
		}
		have[n] = true
		at := len(a)
		if i > 0 {
			for j, m := range a {
				if m == b[i-1] {
					at = j + 1
				}
			}
		}
		a = append(a[:at], append([]string{n}, a[at:]...)...)
	}
	return a
}
