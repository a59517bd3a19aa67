package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// Churn: what a node under churn sees (a CI farm, batch jobs, scale-ups).
// K clients at once, each creating, starting, waiting for and deleting
// containers of `true`, one after the other, for a fixed count. Per
// runtime and K: containers per second (the count over the phase's wall
// time), CPU per container, and the p50 and p99 start latency (from the
// create's exec to the start's return).
//
// CPU per container is counted twice. wait4 of the create, start and
// delete commands counts them and what they reaped, but not a container's
// processes, which outlive create (its pid 1, the container's process). The whole machine's busy time over the phase
// (/proc/stat) counts everything, kworkers freeing namespaces too, and
// whatever else runs: read it on a quiet machine. The runtimes take turns by K, as
// the other rows do by round.

// churnResult is one runtime's churn at one K.
type churnResult struct {
	k, count int
	wall     time.Duration
	cpu      time.Duration   // all commands of all containers
	machine  time.Duration   // the machine's busy time over the phase
	starts   []time.Duration // create+start per container
}

// parseChurn reads -churn's list of client counts ("1,4,16"; "" or "0":
// no churn).
func parseChurn(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" || f == "0" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 || k > 256 {
			return nil, fmt.Errorf("-churn %q: %q is not a client count from 1 to 256", s, f)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// churn runs every K of -churn for every runtime.
func (b *bench) churn() error {
	for i, k := range b.o.churnK {
		for _, r := range b.inTurn(i) {
			res, err := b.churnPhase(r, k)
			if err != nil {
				return err
			}
			b.churns[r.name] = append(b.churns[r.name], res)
		}
	}
	return nil
}

// churnPhase runs k clients of b.o.churnN containers each on runtime r.
func (b *bench) churnPhase(r *runtime, k int) (churnResult, error) {
	res := churnResult{k: k, count: k * b.o.churnN}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, k)
	busy0, err := machineBusy()
	if err != nil {
		return res, err
	}
	start := time.Now()
	for c := 0; c < k; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < b.o.churnN; j++ {
				id := r.id(fmt.Sprintf("churn%d-%d-", k, c), j)
				lat, cpu, err := b.churnOne(r, id)
				if err != nil {
					errs[c] = err
					return
				}
				mu.Lock()
				res.cpu += cpu
				res.starts = append(res.starts, lat)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	busy1, err := machineBusy()
	if err != nil {
		return res, err
	}
	res.machine = busy1 - busy0
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// churnOne is one container's life: create, start, wait for its process
// to exit (through a pidfd: no runtime command, so no runtime CPU),
// delete. It returns the start latency and the CPU of the three commands.
func (b *bench) churnOne(r *runtime, id string) (time.Duration, time.Duration, error) {
	pidFile := filepath.Join(b.work, "churn-"+id+".pid")
	defer os.Remove(pidFile)
	t0 := time.Now()
	cr, err := timed(r.command("create", "--bundle", b.bundle, "--pid-file", pidFile, id), nil, nil)
	if err != nil {
		return 0, 0, err
	}
	pidfd := -1
	if data, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			pidfd, _ = unix.PidfdOpen(pid, 0)
		}
	}
	st, err := timed(r.command("start", id), nil, nil)
	if err != nil {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		r.command("delete", "-f", id).Run()
		return 0, 0, err
	}
	lat := time.Since(t0)
	if pidfd >= 0 {
		err = waitPidfd(pidfd, 10*time.Second)
		unix.Close(pidfd)
	} else {
		err = waitStopped(r, id)
	}
	if err != nil {
		r.command("delete", "-f", id).Run()
		return 0, 0, fmt.Errorf("%s: container %s: %w", r.name, id, err)
	}
	del, err := timed(r.command("delete", id), nil, nil)
	if err != nil {
		return 0, 0, err
	}
	return lat, cr.cpu + st.cpu + del.cpu, nil
}

// waitPidfd waits until the process of pidfd has exited.
func waitPidfd(pidfd int, limit time.Duration) error {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(limit)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("its process did not exit within %v", limit)
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("poll its pidfd: %w", err)
		}
		if n > 0 {
			return nil
		}
	}
}

// reportChurn prints, per K, each runtime's figures and husk's ratios.
func reportChurn(w io.Writer, rs []*runtime, churns map[string][]churnResult) {
	if len(churns) == 0 {
		return
	}
	fmt.Fprintf(w, "\nchurn: K clients, each create, start, wait, delete of `true`, one after the other\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t", r.name)
	}
	others := []*runtime{}
	if find(rs, "husk") != nil {
		for _, r := range rs {
			if r.name != "husk" {
				others = append(others, r)
				fmt.Fprintf(tw, "husk/%s\t", r.name)
			}
		}
	}
	fmt.Fprintln(tw)
	ks := churns[rs[0].name]
	for i := range ks {
		for _, m := range churnMetrics {
			fmt.Fprintf(tw, "K=%d %s\t", ks[i].k, m.name)
			vals := map[string]float64{}
			for _, r := range rs {
				cs := churns[r.name]
				if i >= len(cs) {
					fmt.Fprint(tw, "-\t")
					continue
				}
				vals[r.name] = m.f(cs[i])
				fmt.Fprintf(tw, m.format+"\t", vals[r.name])
			}
			for _, o := range others {
				fmt.Fprintf(tw, "%s\t", num("%.2f", vals["husk"]/vals[o.name]))
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
}

// churnMetrics are the rows of the churn report.
var churnMetrics = []struct {
	name, format string
	f            func(churnResult) float64
}{
	{"containers per second", "%.1f", func(c churnResult) float64 { return float64(c.count) / c.wall.Seconds() }},
	{"CPU per container (commands), ms", "%.1f", func(c churnResult) float64 { return ms(c.cpu) / float64(c.count) }},
	{"CPU per container (machine), ms", "%.1f", func(c churnResult) float64 { return ms(c.machine) / float64(c.count) }},
	{"start latency p50, ms", "%.1f", func(c churnResult) float64 { return ms(quantile(c.starts, 0.5)) }},
	{"start latency p99, ms", "%.1f", func(c churnResult) float64 { return ms(quantile(c.starts, 0.99)) }},
}

// machineBusy is the time every CPU of the machine spent not idle since
// boot: the first line of /proc/stat, in USER_HZ ticks (10 ms), less idle
// and iowait.
func machineBusy() (time.Duration, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is in user already
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %q: %w", line, err)
		}
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond, nil
}
