package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMedianAndQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		name         string
		in           []time.Duration
		median, p90  time.Duration
		min, maximum time.Duration
	}{
		{"empty", nil, 0, 0, 0, 0},
		{"one", ms(5), 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond},
		{"odd unsorted", ms(3, 1, 2), 2 * time.Millisecond, 3 * time.Millisecond, time.Millisecond, 3 * time.Millisecond},
		{"even", ms(4, 1, 3, 2), 2500 * time.Microsecond, 4 * time.Millisecond, time.Millisecond, 4 * time.Millisecond},
		{"ten", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 5500 * time.Microsecond, 9 * time.Millisecond, time.Millisecond, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.median {
				t.Errorf("median = %v, want %v", got, tt.median)
			}
			if got := quantile(tt.in, 0.9); got != tt.p90 {
				t.Errorf("p90 = %v, want %v", got, tt.p90)
			}
			if got := quantile(tt.in, 0); got != tt.min {
				t.Errorf("min = %v, want %v", got, tt.min)
			}
			if got := quantile(tt.in, 1); got != tt.maximum {
				t.Errorf("max = %v, want %v", got, tt.maximum)
			}
		})
	}
}

func TestPhasesOf(t *testing.T) {
	// Two processes' marks, out of order in the file (init's arrive
	// through its parent), merged on time from the bench's exec at 1000.
	in := `{"t":1500,"pid":1,"proc":"run","phase":"main","ms":0.5}
{"t":4000,"pid":2,"proc":"init","phase":"go","ms":1}
{"t":3000,"pid":1,"proc":"run","phase":"nsexec","ms":1.5}

{"t":6000,"pid":1,"proc":"run","phase":"container","ms":3}
`
	order, d, err := phasesOf(strings.NewReader(in), 1000, 6500)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run main", "run nsexec", "init go", "run container", "(process exit)"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	wantD := map[string]time.Duration{"run main": 500, "run nsexec": 1500, "init go": 1000, "run container": 2000, "(process exit)": 500}
	var sum time.Duration
	for k, v := range wantD {
		if d[k] != v {
			t.Errorf("%s: %v, want %v", k, d[k], v)
		}
		sum += d[k]
	}
	if sum != 5500 {
		t.Errorf("phases sum to %v, want the whole run, 5.5µs", sum)
	}
	if _, _, err := phasesOf(strings.NewReader("{"), 0, 1); err == nil {
		t.Error("a broken line was accepted")
	}
}

func TestMergeOrder(t *testing.T) {
	got := mergeOrder([]string{"a", "c"}, []string{"a", "b", "c", "d"})
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestStraceTotal(t *testing.T) {
	out := "% time     seconds  usecs/call     calls    errors syscall\n" +
		"------ ----------- ----------- --------- --------- ------------------\n" +
		" 43.48    0.002537          84        30           nanosleep\n" +
		"100.00    0.007691          21       353         8 total\n"
	if n, err := straceTotal([]byte(out)); err != nil || n != 353 {
		t.Errorf("straceTotal = %d, %v; want 353", n, err)
	}
	if n := straceCalls([]byte(out), "futex", "nanosleep"); n != 30 {
		t.Errorf("straceCalls = %d, want 30", n)
	}
	if _, err := straceTotal([]byte("nothing")); err == nil {
		t.Error("no total line: no error")
	}
}

func TestTrimmedMean(t *testing.T) {
	ds := []time.Duration{10, 10, 10, 10, 10, 10, 10, 10, 10, 1000}
	if got := mean(ds); got != 10 {
		t.Errorf("mean = %v, want 10 (the outlier trimmed)", got)
	}
	if got := mean([]time.Duration{4, 6}); got != 5 {
		t.Errorf("mean of two = %v, want 5", got)
	}
	if got := mean(nil); got != 0 {
		t.Errorf("mean of none = %v", got)
	}
}

func TestInitTrace(t *testing.T) {
	out := "husk version x\ninit internal/bytealg @0.004 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init runtime @0.022 ms, 0.25 ms clock, 0 bytes, 0 allocs\n" +
		"init main @1.9 ms, 0.05 ms clock, 11600 bytes, 53 allocs\nnot a line\n"
	n, ms := initTrace([]byte(out))
	if n != 3 || ms < 0.2999 || ms > 0.3001 {
		t.Errorf("initTrace = %d, %v; want 3, 0.3", n, ms)
	}
}

// The floor's bound: a job's floor plus crun's parallel run less crun's
// own floor, over crun's parallel run.
func TestReportFloor(t *testing.T) {
	msS := func(wall, cpu int) sample {
		return sample{wall: time.Duration(wall) * time.Millisecond, cpu: time.Duration(cpu) * time.Millisecond}
	}
	crun := newRuntime("crun", "crun", "")
	crun.add(rowParallel, msS(200, 400))
	jobs := []floorJob{{name: "husk --version, then true"}, {name: crunFloor}}
	samples := [][]sample{{msS(150, 300)}, {msS(80, 160)}}
	var out strings.Builder
	reportFloor(&out, jobs, samples, "", crun, 50)
	// (150+200-80)/200 = 1.35, (300+400-160)/400 = 1.35
	if want := "husk --version, then true: 1.35 of its wall, 1.35 of its CPU"; !strings.Contains(out.String(), want) {
		t.Errorf("no %q in:\n%s", want, out.String())
	}
	if !strings.Contains(out.String(), "0.75") || !strings.Contains(out.String(), "0.40") {
		t.Errorf("want the floors' ratios 0.75 (husk's CPU) and 0.40 (crun's wall):\n%s", out.String())
	}
}

func TestParseChurn(t *testing.T) {
	ks, err := parseChurn("1, 4,16")
	if err != nil || len(ks) != 3 || ks[0] != 1 || ks[1] != 4 || ks[2] != 16 {
		t.Fatalf("parseChurn(1, 4,16) = %v, %v", ks, err)
	}
	if ks, err := parseChurn(""); err != nil || len(ks) != 0 {
		t.Fatalf(`parseChurn("") = %v, %v; want none`, ks, err)
	}
	for _, bad := range []string{"x", "-1", "1000", "4,,y"} {
		if _, err := parseChurn(bad); err == nil {
			t.Errorf("parseChurn(%q): no error", bad)
		}
	}
}

func TestReportChurnRatios(t *testing.T) {
	rs := []*runtime{newRuntime("husk", "", ""), newRuntime("crun", "", "")}
	churns := map[string][]churnResult{
		"husk": {{k: 4, count: 8, wall: 2 * time.Second, cpu: 80 * time.Millisecond, starts: []time.Duration{time.Millisecond}}},
		"crun": {{k: 4, count: 8, wall: 4 * time.Second, cpu: 40 * time.Millisecond, starts: []time.Duration{2 * time.Millisecond}}},
	}
	var out strings.Builder
	reportChurn(&out, rs, churns)
	for _, want := range []string{"K=4 containers per second", "4.0", "2.0", "2.00", "K=4 CPU per container (commands), ms", "10.0", "5.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("churn report lacks %q:\n%s", want, out.String())
		}
	}
}
