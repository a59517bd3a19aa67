// Command bench times husk, runc and crun in one interleaved run (each
// round runs every runtime once, starting with the next one in turn:
// husk runc crun, runc crun husk, ...) and prints, per runtime, medians
// and husk's ratios to the others:
//   - run-to-exit of `true` in a busybox bundle (wall and CPU time);
//   - create, start and delete of that bundle, timed separately;
//   - exec ID true into a running container (wall and CPU time), the path
//     of every kubectl exec and liveness probe;
//   - 50 containers run to exit in parallel (wall and CPU time);
//   - churn: K clients (1, 4, 16) each creating, starting, waiting for and
//     deleting containers one after the other: containers per second, CPU
//     per container, start latency p50 and p99 (churn.go);
//   - peak RSS of the create process and of the container's init; the
//     RSS and PSS of a created container's waiting pid 1, and the state
//     each container keeps on the host;
//   - binary size, and the syscalls of one run (strace -f -c);
//   - for husk, its Go package initialisers: how many, and their time;
//   - the floor of the parallel row: the same batches starting only the
//     processes a container's start starts, with no container (floor.go);
//
// then husk's own time per phase of a run, from its trace (HUSK_TRACE),
// next to the measured run-to-exit it must add up to.
//
// CPU time (user+sys from wait4) is steadier than wall time on a shared
// machine: compare both.
//
// crun refuses the hybrid cgroup layout (v1 controllers plus
// /sys/fs/cgroup/unified), so the whole benchmark, all runtimes alike, runs
// in a private mount namespace in which /sys/fs/cgroup/unified is unmounted:
// the program re-executes itself with CLONE_NEWNS and unmounts it there.
//
//	go run ./bench -husk ./husk -n 30
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// reexecEnv marks the re-executed child that runs inside the private mount
// namespace.
const reexecEnv = "HUSK_BENCH_IN_MNTNS"

const unifiedCgroup = "/sys/fs/cgroup/unified"

type options struct {
	n        int
	warmup   int
	parallel int // containers per parallel batch
	batches  int // parallel batches per runtime
	bundle   string
	husk     string
	baseline string // another husk build, e.g. before a change
	runc     string
	crun     string
	busybox  string
	keep     bool
	exec     bool
	strace   bool
	tmpfs    bool // state roots on a tmpfs, as /run is on hosts with systemd
	floor    bool // also time the parallel row's floor (floor.go)
	criuN    int  // timed checkpoint/restore rounds (checkpoint.go)
	churnK   []int
	churnN   int // containers per churn client
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 30, "timed rounds per runtime (run, create/start/delete, exec, traced run)")
	flag.IntVar(&o.warmup, "warmup", 2, "untimed runs per runtime before timing")
	flag.IntVar(&o.parallel, "parallel", 50, "containers run to exit at once in the parallel row (0: skip)")
	flag.IntVar(&o.batches, "batches", 3, "parallel batches per runtime")
	flag.StringVar(&o.bundle, "bundle", "", "bundle to run (default: build a busybox bundle running `true`)")
	flag.StringVar(&o.husk, "husk", "./husk", "husk binary")
	flag.StringVar(&o.baseline, "baseline", "", "another husk binary to time alongside, as husk-base (e.g. the build before a change)")
	flag.StringVar(&o.runc, "runc", "runc", "runc binary (skipped when missing)")
	flag.StringVar(&o.crun, "crun", "crun", "crun binary (skipped when missing)")
	flag.StringVar(&o.busybox, "busybox", "/bin/busybox", "static busybox for the bundle's rootfs")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dirs (bundle, state roots, traces)")
	flag.BoolVar(&o.exec, "exec", true, "also time exec into a running container")
	flag.BoolVar(&o.strace, "strace", true, "count the syscalls of one run with strace -f -c")
	flag.BoolVar(&o.tmpfs, "tmpfs", true, "keep the runtimes' state roots on a tmpfs (as /run is on hosts with systemd, where runc, crun and husk keep theirs); false: in the temp dir")
	flag.BoolVar(&o.floor, "floor", true, "with -parallel, also time the floor of the parallel row: each job only starts husk once and `true`, as a container does, with no container work (and the same with empty Go programs, without cgo and with it)")
	flag.IntVar(&o.criuN, "criu-n", 5, "timed checkpoint and restore rounds of husk and runc, where criu works (0: skip)")
	churn := flag.String("churn", "1,4,16", "client counts of the churn rows, each client creating, starting, waiting for and deleting containers (\"\": skip)")
	flag.IntVar(&o.churnN, "churn-n", 20, "containers per churn client")
	flag.Parse()
	var err error
	if o.churnK, err = parseChurn(*churn); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}

	if os.Getenv(reexecEnv) == "" {
		os.Exit(reexecInMountNamespace())
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// reexecInMountNamespace runs this program again in a new mount namespace
// (Go makes / private there before exec) and returns its exit code.
func reexecInMountNamespace() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: find own executable:", err)
		return 1
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), reexecEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "bench: re-exec in a new mount namespace:", err)
		return 1
	}
	return 0
}

func run(o options) error {
	if err := unmountUnified(); err != nil {
		return err
	}
	if o.n < 1 {
		return fmt.Errorf("-n %d: want at least 1", o.n)
	}
	work, err := os.MkdirTemp("", "husk-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("work dir:", work)
	} else {
		defer os.RemoveAll(work)
	}
	bundle := o.bundle
	if bundle == "" {
		bundle = filepath.Join(work, "bundle")
		if err := makeBundle(bundle, o.busybox); err != nil {
			return fmt.Errorf("make the busybox bundle: %w", err)
		}
	}
	if bundle, err = filepath.Abs(bundle); err != nil {
		return err
	}
	roots := work
	if o.tmpfs {
		if roots, err = stateTmpfs(work); err != nil {
			return err
		}
		defer syscall.Unmount(roots, syscall.MNT_DETACH)
	}
	runtimes := findRuntimes(o, work, roots)
	if len(runtimes) == 0 {
		return errors.New("no runtime to time")
	}
	fmt.Printf("bundle %s: %d warm-up + %d timed rounds per runtime, interleaved\n", bundle, o.warmup, o.n)

	b := &bench{o: o, bundle: bundle, work: work, runtimes: runtimes, churns: map[string][]churnResult{}}
	if h := find(runtimes, "husk"); h != nil && o.floor && o.parallel > 0 {
		crun := ""
		if c := find(runtimes, "crun"); c != nil {
			crun = c.bin
		}
		b.floorJobs, b.floorSkipped = floorJobs(h.bin, crun, o.busybox, work)
		b.floorSamples = make([][]sample, len(b.floorJobs))
	}
	steps := []func() error{b.warm, b.rounds, b.execs, b.parallelRuns, b.churn, b.sizes, b.goInits, b.syscalls, b.checkpoints}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	report(os.Stdout, runtimes)
	reportChurn(os.Stdout, runtimes, b.churns)
	reportFloor(os.Stdout, b.floorJobs, b.floorSamples, b.floorSkipped, find(runtimes, "crun"), o.parallel)
	if h := find(runtimes, "husk"); h != nil && len(b.traces) > 0 {
		reportPhases(os.Stdout, b.traces, h.s[rowRun])
	}
	for _, r := range runtimes {
		warnLeftovers(r)
	}
	return nil
}

func find(rs []*runtime, name string) *runtime {
	for _, r := range rs {
		if r.name == name {
			return r
		}
	}
	return nil
}

// stateTmpfs mounts a tmpfs (in this private mount namespace) under work
// for the runtimes' state roots: on a host with systemd, /run, where
// runc, crun and husk keep their state, is one. (On this kind of machine
// /tmp may be ext4, where after many runs each new inode costs up to a
// millisecond, and husk makes more of them per start than crun.)
func stateTmpfs(work string) (string, error) {
	dir := filepath.Join(work, "state")
	if err := os.Mkdir(dir, 0o711); err != nil {
		return "", err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0711"); err != nil {
		return "", fmt.Errorf("mount a tmpfs on %s for the state roots (-tmpfs=false: none): %w", dir, err)
	}
	fmt.Printf("state roots on a tmpfs (%s), as /run on hosts with systemd\n", dir)
	return dir, nil
}

// unmountUnified removes the cgroup2 mount of a hybrid layout from this
// (private) mount namespace, so crun accepts the layout.
func unmountUnified() error {
	err := syscall.Unmount(unifiedCgroup, 0)
	switch {
	case err == nil:
		fmt.Printf("private mount namespace: %s unmounted (hybrid cgroups -> v1 only)\n", unifiedCgroup)
	case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOENT):
		// Not a mount point here: pure v1 or pure v2; nothing to do.
	default:
		return fmt.Errorf("umount %s: %w", unifiedCgroup, err)
	}
	return nil
}

func findRuntimes(o options, work, roots string) []*runtime {
	var out []*runtime
	for _, c := range []struct{ name, bin string }{
		{"husk", o.husk}, {"husk-base", o.baseline}, {"runc", o.runc}, {"crun", o.crun},
	} {
		if c.bin == "" {
			continue
		}
		path, err := exec.LookPath(c.bin)
		if err != nil {
			fmt.Printf("note: %s not found (%s): skipped\n", c.name, c.bin)
			continue
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if strings.HasPrefix(c.name, "husk") {
			path = freshCopy(path, filepath.Join(work, "bin-"+c.name))
		}
		out = append(out, newRuntime(c.name, path, filepath.Join(roots, "root-"+c.name)))
	}
	return out
}

// freshCopy copies a husk build (and the husk-cni beside it) into dir and
// returns the copy's path, or path itself when it cannot. Both husk builds
// then start from the same page-cache state: a binary whose pages are all
// cached (one just run by a test suite) gets more of them mapped per fault
// (fault-around), which shows as a higher RSS of init than a colder
// build's with the same code.
func freshCopy(path, dir string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return path
	}
	for _, name := range []string{filepath.Base(path), "husk-cni"} {
		err := copyFile(filepath.Join(filepath.Dir(path), name), filepath.Join(dir, name))
		if err != nil && name == filepath.Base(path) {
			return path
		}
	}
	return filepath.Join(dir, filepath.Base(path))
}

// copyFile copies in the kernel (copy_file_range), not through this
// process's memory: the peak RSS wait4 reports for a command counts
// what its parent held when it forked.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
