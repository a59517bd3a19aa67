package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"
	"time"
)

// quantile returns the nearest-rank q-quantile (0 < q <= 1) of ds.
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

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// report prints one benchmark: times(r) of each runtime r.
func report(w io.Writer, title string, rs []*runtime, times func(*runtime) []time.Duration) {
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "runtime\truns\tmin ms\tmedian ms\tp90 ms\tmax ms\t")
	for _, r := range rs {
		ts := times(r)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", r.name, len(ts),
			ms(quantile(ts, 0)), ms(median(ts)), ms(quantile(ts, 0.9)), ms(quantile(ts, 1)))
	}
	tw.Flush()

	var husk *runtime
	for _, r := range rs {
		if r.name == "husk" {
			husk = r
		}
	}
	if husk == nil {
		return
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		if r == husk {
			continue
		}
		h, o := times(husk), times(r)
		fmt.Fprintf(w, "husk/%s: median %.2f  p90 %.2f\n", r.name,
			ratio(median(h), median(o)), ratio(quantile(h, 0.9), quantile(o, 0.9)))
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
