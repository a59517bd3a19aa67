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
	"run exec":       "execve of husk (and a dynamic build's loader), C constructors",
	"run main":       "Go runtime boot, package initialisers",
	"run config":     "read config.json, convert, validate, compile seccomp",
	"run prepare":    "state dir, lock, exec.fifo, cgroup paths, state.json",
	"run cgroups":    "cgroups made, opened for init to enter itself",
	"run spawn":      "binary view, fds, fork+exec husk init",
	"run join":       "init moved into the cgroups by pid (systemd driver, rootless)",
	"run nsexec":     "bootstrap message; nsexec: namespaces, fork",
	"init config":    "pid 1 waits for CONFIG: the parent's limits and mount plan (no Go boots in init)",
	"init rootfs":    "pid 1: lo up, mounts, devices (up to the hooks)",
	"init hooks":     "createRuntime, createContainer hooks",
	"init setup":     "pivot_root",
	"init ready":     "pid 1: console, read-only /dev and /, hostname, sysctls, read-only and masked paths; rlimits, attributes, credentials, caps, cwd",
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

// reportPhases prints each phase over the traced runs (median and mean),
// and checks the table against the measured (untraced) run-to-exit. The
// runs with the highest and lowest tenth of totals are left out (a shared
// machine's stalls would otherwise decide the table); over the others the
// phase means add up to their mean total exactly, which is compared with
// the untraced runs' trimmed mean and median.
func reportPhases(w io.Writer, traces []traceRun, runs []sample) {
	type traced struct {
		total  time.Duration
		phases map[string]time.Duration
	}
	var order []string
	var all []traced
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
		all = append(all, traced{total: time.Duration(tr.end - tr.start), phases: d})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].total < all[j].total })
	cut := len(all) / 10
	kept := all[cut : len(all)-cut]
	if len(kept) == 0 {
		return
	}
	var totals []time.Duration
	for _, t := range kept {
		totals = append(totals, t.total)
	}
	fmt.Fprintf(w, "\nhusk run-to-exit by phase (%d traced runs, HUSK_TRACE; the %d runs with the highest and lowest totals left out)\n",
		len(all), len(all)-len(kept))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "process phase\tmedian ms\tmean ms\tshare\twhat")
	sum := time.Duration(0)
	per := map[string][]time.Duration{}
	for _, name := range order {
		for _, t := range kept {
			per[name] = append(per[name], t.phases[name])
		}
		sum += plainMean(per[name])
	}
	for _, name := range order {
		m := plainMean(per[name])
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.0f%%\t%s\n", name, ms(median(per[name])), ms(m), 100*float64(m)/float64(sum), phaseHelp[name])
	}
	tw.Flush()
	walls := make([]time.Duration, len(runs))
	for i, s := range runs {
		walls[i] = s.wall
	}
	fmt.Fprintf(w, "sum of the phase means %.2f ms (= the mean of those traced runs, %.2f)\n", ms(sum), ms(plainMean(totals)))
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

// plainMean is the arithmetic mean of ds.
func plainMean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
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
