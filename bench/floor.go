package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// The floor of the parallel row. A husk container starts one Go program,
// husk itself (its pid 1, the launcher, runs C only: `husk init` never
// starts the Go runtime), then the container's process; crun starts one C
// program. A floor batch runs, in each of its jobs, just those processes
// one after the other: no namespaces, mounts or cgroups, no config. Its
// time is what husk's process structure alone costs, against which to
// read the parallel row's husk/crun ratio. Two more jobs replace husk
// with the smallest Go program (an empty main), without cgo and with it
// (static against musl, as husk is): the least any Go runtime can cost.

// crunFloor names crun's floor job, which the report reads back.
const crunFloor = "crun --version, then true"

// floorJob is one kind of floor job: its commands, run in turn, with env
// added to their environment.
type floorJob struct {
	name string
	cmds [][]string
	env  []string
}

// floorJobs are the jobs of a floor batch: husk's (first), crun's when
// crun is there (its one process, then true), and the empty Go
// programs', without cgo and with it. They are built into work; when a
// build fails (no go command, no musl-gcc) its job is left out, with
// the reason in skipped.
func floorJobs(husk, crun, busybox, work string) (jobs []floorJob, skipped string) {
	tru := []string{busybox, "true"}
	jobs = []floorJob{{"husk --version, then true", [][]string{{husk, "--version"}, tru}, nil}}
	if crun != "" {
		jobs = append(jobs, floorJob{crunFloor, [][]string{{crun, "--version"}, tru}, nil})
	}
	var skips []string
	for _, cgo := range []bool{false, true} {
		name := "an empty Go program, then true"
		if cgo {
			name = "an empty cgo program, static as husk, then true"
		}
		empty, err := buildEmptyGo(work, cgo)
		if err != nil {
			skips = append(skips, fmt.Sprintf("not measured: %s: %v", name, err))
			continue
		}
		// One P, as package onep gives every husk process.
		jobs = append(jobs, floorJob{name, [][]string{{empty}, tru}, []string{"GOMAXPROCS=1"}})
	}
	return jobs, strings.Join(skips, "\n")
}

// buildEmptyGo builds `func main() {}` into work: without cgo, or with an
// empty cgo preamble, linked statically against musl as husk is (every
// husk process has cgo: nsenter's constructor runs before the runtime).
func buildEmptyGo(work string, cgo bool) (string, error) {
	name := map[bool]string{false: "emptygo", true: "emptycgo"}[cgo]
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	main := "package main\n\nfunc main() {}\n"
	args := []string{"build", "-o", name, "."}
	env := []string{"CGO_ENABLED=0", "GOFLAGS="}
	if cgo {
		main = "package main\n\nimport \"C\"\n\nfunc main() {}\n"
		args = []string{"build", "-ldflags", "-linkmode external -extldflags -static", "-o", name, "."}
		env = []string{"CGO_ENABLED=1", "CC=musl-gcc", "GOFLAGS="}
	}
	files := map[string]string{"go.mod": "module " + name + "\n", "main.go": main}
	for file, text := range files {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return filepath.Join(dir, name), nil
}

// floorBatch runs n copies of job at once and returns the batch's wall
// time and the CPU time of all its processes.
func floorBatch(job floorJob, n int) (sample, error) {
	cpus := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for j := 0; j < n; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range job.cmds {
				s, err := timed(exec.Command(c[0], c[1:]...), job.env, nil)
				if err != nil {
					errs[j] = err
					return
				}
				cpus[j] += s.cpu
			}
		}()
	}
	wg.Wait()
	total := sample{wall: time.Since(start)}
	for j := range cpus {
		if errs[j] != nil {
			return sample{}, errs[j]
		}
		total.cpu += cpus[j]
	}
	return total, nil
}

// reportFloor prints the floor jobs' medians and their ratios to crun's
// parallel row (the whole container runs).
func reportFloor(w io.Writer, jobs []floorJob, samples [][]sample, skipped string, crun *runtime, n int) {
	if len(jobs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nfloor of the parallel row: %d jobs at once, each only starting the processes a husk container starts (no container)\n", n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "job\twall ms\tCPU ms\t")
	if crun != nil {
		fmt.Fprint(tw, "wall/crun's parallel run\tCPU/crun's\t")
	}
	fmt.Fprintln(tw)
	crunWall, crunCPU := medianOf(crun, false), medianOf(crun, true)
	for i, job := range jobs {
		wall, cpu := medianOfSamples(samples[i], false), medianOfSamples(samples[i], true)
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t", job.name, ms(wall), ms(cpu))
		if crun != nil {
			fmt.Fprintf(tw, "%s\t%s\t", num("%.2f", ms(wall)/ms(crunWall)), num("%.2f", ms(cpu)/ms(crunCPU)))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	// crun's container work is its parallel run less its floor. Added to
	// a job's floor, it is the least a runtime starting that job's
	// processes could take if its container work cost no more than
	// crun's.
	var cf []sample
	for i, job := range jobs {
		if job.name == crunFloor {
			cf = samples[i]
		}
	}
	if crun != nil && len(cf) > 0 {
		fmt.Fprintln(w, "each floor plus crun's container work (crun's parallel run less its floor), against crun's parallel run:")
		for i, job := range jobs {
			if job.name == crunFloor || len(samples[i]) == 0 {
				continue
			}
			least := func(cpu bool) float64 {
				c := medianOf(crun, cpu)
				return ms(medianOfSamples(samples[i], cpu)+c-medianOfSamples(cf, cpu)) / ms(c)
			}
			fmt.Fprintf(w, "  %s: %.2f of its wall, %.2f of its CPU\n", job.name, least(false), least(true))
		}
	}
	if skipped != "" {
		fmt.Fprintln(w, skipped)
	}
}

// medianOf is the median wall (or CPU) time of r's parallel row.
func medianOf(r *runtime, cpu bool) time.Duration {
	if r == nil {
		return 0
	}
	return medianOfSamples(r.s[rowParallel], cpu)
}

func medianOfSamples(ss []sample, cpu bool) time.Duration {
	ds := make([]time.Duration, len(ss))
	for i, s := range ss {
		ds[i] = s.wall
		if cpu {
			ds[i] = s.cpu
		}
	}
	return median(ds)
}
