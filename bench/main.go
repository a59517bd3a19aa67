// Command bench times, for husk, runc and crun, interleaved in one run
// (husk, runc, crun, husk, ...):
//   - run: run-to-exit of `true` in a busybox bundle;
//   - exec: `exec ID true` into a running container of that bundle (its
//     process a sleep), the path of every kubectl exec and liveness probe;
//
// and prints per-runtime median and p90 and husk's ratios to the others.
//
// crun refuses the hybrid cgroup layout (v1 controllers plus
// /sys/fs/cgroup/unified), so the whole benchmark, all runtimes alike, runs
// in a private mount namespace in which /sys/fs/cgroup/unified is unmounted:
// the program re-executes itself with CLONE_NEWNS and unmounts it there.
//
//	go run ./bench -husk ./husk -n 30
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// reexecEnv marks the re-executed child that runs inside the private mount
// namespace.
const reexecEnv = "HUSK_BENCH_IN_MNTNS"

const unifiedCgroup = "/sys/fs/cgroup/unified"

type options struct {
	n       int
	warmup  int
	bundle  string
	husk    string
	runc    string
	crun    string
	busybox string
	keep    bool
	exec    bool
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 30, "timed runs per runtime")
	flag.IntVar(&o.warmup, "warmup", 2, "untimed runs per runtime before timing")
	flag.StringVar(&o.bundle, "bundle", "", "bundle to run (default: build a busybox bundle running `true`)")
	flag.StringVar(&o.husk, "husk", "./husk", "husk binary")
	flag.StringVar(&o.runc, "runc", "runc", "runc binary (skipped when missing)")
	flag.StringVar(&o.crun, "crun", "crun", "crun binary (skipped when missing)")
	flag.StringVar(&o.busybox, "busybox", "/bin/busybox", "static busybox for the bundle's rootfs")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dirs (bundle, state roots)")
	flag.BoolVar(&o.exec, "exec", true, "also time exec into a running container")
	flag.Parse()

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

	runtimes := findRuntimes(o, work)
	if len(runtimes) == 0 {
		return errors.New("no runtime to time")
	}
	fmt.Printf("bundle %s, %d warm-up + %d timed run-to-exit per runtime, interleaved\n",
		bundle, o.warmup, o.n)

	for i := 0; i < o.warmup; i++ {
		for _, r := range runtimes {
			if _, err := r.runOnce(bundle, fmt.Sprintf("warm-%d", i)); err != nil {
				return err
			}
		}
	}
	for i := 0; i < o.n; i++ {
		for _, r := range runtimes {
			d, err := r.runOnce(bundle, fmt.Sprintf("run-%d", i))
			if err != nil {
				return err
			}
			r.runs = append(r.runs, d)
		}
	}
	report(os.Stdout, "run-to-exit of true", runtimes, func(r *runtime) []time.Duration { return r.runs })
	if o.exec {
		if err := benchExec(o, runtimes, bundle, work); err != nil {
			return err
		}
		report(os.Stdout, "exec ID true", runtimes, func(r *runtime) []time.Duration { return r.execs })
	}
	for _, r := range runtimes {
		r.warnLeftovers()
	}
	return nil
}

// benchExec starts one sleeping container per runtime and times o.n execs
// of `true` into each, interleaved, then removes the containers.
func benchExec(o options, runtimes []*runtime, bundle, work string) error {
	sleeper := filepath.Join(work, "bundle-sleep")
	if err := sleepBundle(bundle, sleeper); err != nil {
		return err
	}
	id := fmt.Sprintf("bench-exec-%d", os.Getpid())
	for _, r := range runtimes {
		if _, err := r.do("run", "-d", "--bundle", sleeper, id); err != nil {
			return err
		}
		defer r.do("delete", "-f", id)
	}
	for i := 0; i < o.warmup+o.n; i++ {
		for _, r := range runtimes {
			d, err := r.do("exec", id, "true")
			if err != nil {
				return err
			}
			if i >= o.warmup {
				r.execs = append(r.execs, d)
			}
		}
	}
	return nil
}

// do runs `RUNTIME --root R ARGS...` with stdin and stdout on /dev/null
// and stderr in a file (a detached container must not hold a pipe of
// ours), and returns the wall time of the command alone.
func (r *runtime) do(args ...string) (time.Duration, error) {
	errf, err := os.CreateTemp("", "husk-bench-stderr-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(errf.Name())
	defer errf.Close()
	cmd := exec.Command(r.bin, append([]string{"--root", r.root}, args...)...)
	cmd.Stderr = errf
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if err != nil {
		msg, _ := os.ReadFile(errf.Name())
		return 0, fmt.Errorf("%s %v: %w: %s", r.name, args, err, bytes.TrimSpace(msg))
	}
	return d, nil
}

// warnLeftovers prints a note when `run` left containers behind in r's root.
func (r *runtime) warnLeftovers() {
	out, err := exec.Command(r.bin, "--root", r.root, "list", "-q").CombinedOutput()
	if err != nil {
		fmt.Printf("note: %s list: %v: %s\n", r.name, err, bytes.TrimSpace(out))
		return
	}
	if left := bytes.Fields(out); len(left) > 0 {
		fmt.Printf("note: %s left %d containers after run: %s\n", r.name, len(left), bytes.Join(left, []byte(" ")))
	}
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

// runtime is one OCI runtime under test with its own state root.
type runtime struct {
	name  string
	bin   string
	root  string
	runs  []time.Duration // run-to-exit
	execs []time.Duration // exec ID true
}

func findRuntimes(o options, work string) []*runtime {
	var out []*runtime
	for _, c := range []struct{ name, bin string }{
		{"husk", o.husk}, {"runc", o.runc}, {"crun", o.crun},
	} {
		path, err := exec.LookPath(c.bin)
		if err != nil {
			fmt.Printf("note: %s not found (%s): skipped\n", c.name, c.bin)
			continue
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		out = append(out, &runtime{name: c.name, bin: path, root: filepath.Join(work, "root-"+c.name)})
	}
	return out
}

// runOnce runs the bundle to exit under a fresh id and returns the wall time
// of the whole `RUNTIME --root R run --bundle B ID`.
func (r *runtime) runOnce(bundle, tag string) (time.Duration, error) {
	id := fmt.Sprintf("bench-%s-%d-%s", r.name, os.Getpid(), tag)
	cmd := exec.Command(r.bin, "--root", r.root, "run", "--bundle", bundle, id)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	cmd.Stdin = devnull

	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s run %s: %w: %s", r.name, id, err, bytes.TrimSpace(out.Bytes()))
	}
	return d, nil
}
