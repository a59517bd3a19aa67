package mountrun

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The mounts' cost, Go init's (SetupWith up to pivot_root) against the
// launcher's (the plan's run) and the parent's plan, for the runc spec's
// mounts: each made b.N times in a child, each time in a mount namespace
// of its own (unshared, then the rootfs detached), the times summed. A
// measurement, not a test:
//
//	go test ./nsenter/internal/mountrun/ -run '^$' -bench Mounts -benchtime 200x
func BenchmarkMounts(b *testing.B) {
	requireRoot(b)
	for _, side := range []string{"go", "c", "plan"} {
		b.Run(side, func(b *testing.B) {
			c := bundle(b, func(s *specs.Spec, host string) {})
			out := runSide(b, "bench-"+side+":"+strconv.Itoa(b.N), c)
			ns, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
			if err != nil {
				b.Fatalf("side %s: %q", side, out)
			}
			b.ReportMetric(float64(ns)/float64(b.N), "ns/mounts")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// benchSide makes the side's mounts n times and prints the nanoseconds
// they took in all. The thread is locked (child): /proc/self is this
// thread's mount namespace only on the main thread, which TestMain's
// goroutine starts on.
func benchSide(side string) int {
	kind, count, _ := strings.Cut(strings.TrimPrefix(side, "bench-"), ":")
	n, _ := strconv.Atoi(count)
	c, root, err := childConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if unix.Gettid() != unix.Getpid() {
		fmt.Fprintln(os.Stderr, "not on the main thread")
		return 2
	}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	own, err := rootfs.ParseOwnCgroups(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var total time.Duration
	for i := 0; i < n; i++ {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		start := time.Now()
		var err error
		switch kind {
		case "go":
			if err = rootfs.SetupWith(&c, func() error { return errStop }, nil); errors.Is(err, errStop) {
				err = nil
			}
		case "plan":
			_, err = launch.NewMountPlan(&c, launch.MountEnv{Cgroups: own})
		default:
			var plan *bootstrap.MountPlan
			if plan, err = launch.NewMountPlan(&c, launch.MountEnv{Cgroups: own}); err != nil {
				break
			}
			start = time.Now() // the launcher's part only: the plan is the parent's
			err = Run(plan)
		}
		total += time.Since(start)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if kind == "plan" {
			continue // nothing mounted
		}
		if err := unix.Unmount(root, unix.MNT_DETACH); err != nil {
			fmt.Fprintln(os.Stderr, "detach the rootfs:", err)
			return 2
		}
	}
	fmt.Println(total.Nanoseconds())
	return 0
}
