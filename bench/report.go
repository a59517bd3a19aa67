package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"
	"time"
)

// quantile returns the nearest-rank q-quantile (0 <= q <= 1) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	if rank < 0 {
		rank = 0
	}
	return s[rank]
}

// median is the middle value (mean of the two middle ones for even counts).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianf is median for plain numbers.
func medianf(vs []float64) float64 {
	ds := make([]time.Duration, len(vs))
	for i, v := range vs {
		ds[i] = time.Duration(v * 1e6)
	}
	return float64(median(ds)) / 1e6
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// line is one row of the summary: a figure per runtime (NaN: none).
type line struct {
	name   string
	values []float64
	format string
}

// summary is every row of the report for the runtimes rs.
func summary(rs []*runtime) []line {
	var out []line
	pick := func(name, format string, f func(r *runtime) (float64, bool)) {
		l := line{name: name, format: format}
		any := false
		for _, r := range rs {
			v, ok := f(r)
			if !ok {
				v = math.NaN()
			}
			any = any || ok
			l.values = append(l.values, v)
		}
		if any {
			out = append(out, l)
		}
	}
	wall := func(row string, q float64) func(*runtime) (float64, bool) {
		return func(r *runtime) (float64, bool) {
			ss := r.s[row]
			ds := make([]time.Duration, len(ss))
			for i, s := range ss {
				ds[i] = s.wall
			}
			if q < 0 {
				return ms(median(ds)), len(ss) > 0
			}
			return ms(quantile(ds, q)), len(ss) > 0
		}
	}
	cpu := func(row string, part func(sample) time.Duration) func(*runtime) (float64, bool) {
		return func(r *runtime) (float64, bool) {
			ss := r.s[row]
			ds := make([]time.Duration, len(ss))
			for i, s := range ss {
				ds[i] = part(s)
			}
			return ms(median(ds)), len(ss) > 0
		}
	}
	all := func(s sample) time.Duration { return s.cpu }
	kernel := func(s sample) time.Duration { return s.sys }
	user := func(s sample) time.Duration { return s.cpu - s.sys }
	rss := func(row string) func(*runtime) (float64, bool) {
		return func(r *runtime) (float64, bool) {
			ss := r.s[row]
			vs := make([]float64, len(ss))
			for i, s := range ss {
				vs[i] = float64(s.maxRSS) / 1024
			}
			return medianf(vs), len(ss) > 0
		}
	}
	value := func(row string) func(*runtime) (float64, bool) {
		return func(r *runtime) (float64, bool) { return medianf(r.v[row]), len(r.v[row]) > 0 }
	}
	for _, row := range []string{rowRun, rowCreate, rowStart, rowDelete, rowExec, rowParallel, rowCheckpoint, rowRestore} {
		pick(row+", median ms", "%.1f", wall(row, -1))
		if row == rowRun || row == rowExec || row == rowParallel {
			pick(row+", p90 ms", "%.1f", wall(row, 0.9))
			pick(row+", CPU ms (user+sys)", "%.1f", cpu(row, all))
			pick(row+", CPU ms in user space", "%.1f", cpu(row, user))
			pick(row+", CPU ms in the kernel", "%.1f", cpu(row, kernel))
		}
	}
	pick("peak RSS of the create process, MiB", "%.1f", rss(rowCreate))
	pick(valInitRSS, "%.1f", value(valInitRSS))
	pick(valInitRSSNow, "%.1f", value(valInitRSSNow))
	pick(valInitPss, "%.1f", value(valInitPss))
	pick(valStateKiB, "%.0f", value(valStateKiB))
	pick(valBinary, "%.1f", value(valBinary))
	pick(valSyscalls, "%.0f", value(valSyscalls))
	pick(valSyscallsOwn, "%.0f", value(valSyscallsOwn))
	pick(valInits, "%.0f", value(valInits))
	pick(valInitMs, "%.2f", value(valInitMs))
	return out
}

// report prints the summary: medians per runtime, and husk's ratios.
func report(w io.Writer, rs []*runtime) {
	fmt.Fprintf(w, "\nmedians (%d rounds; parallel: wall of a batch, CPU of all its runs)\n", len(rs[0].s[rowRun]))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t", r.name)
	}
	hi := -1
	for i, r := range rs {
		if r.name == "husk" {
			hi = i
		}
	}
	if hi >= 0 {
		for _, r := range rs {
			if r.name != "husk" {
				fmt.Fprintf(tw, "husk/%s\t", r.name)
			}
		}
	}
	fmt.Fprintln(tw)
	for _, l := range summary(rs) {
		fmt.Fprintf(tw, "%s\t", l.name)
		for _, v := range l.values {
			fmt.Fprintf(tw, "%s\t", num(l.format, v))
		}
		if hi >= 0 {
			for i, v := range l.values {
				if i != hi {
					fmt.Fprintf(tw, "%s\t", num("%.2f", l.values[hi]/v))
				}
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func num(format string, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}
