package proc

import (
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenInitGone: a recorded init whose pid is free, names a thread of
// another process, or a process that started at another time is gone:
// OpenInit opens nothing, and so signals nothing.
func TestOpenInitGone(t *testing.T) {
	cmd := exec.Command("sleep", "100")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	_, start, err := Stat(pid)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := OpenInit(pid, start+1); p != nil || err != nil {
		t.Errorf("another start time: %v %v, want gone", p, err)
	}
	// A thread of this process that is not its leader.
	tids := make(chan int)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread() // kept till the goroutine ends: the thread exits with it
		tids <- unix.Gettid()
		<-release
	}()
	tid := <-tids
	defer close(release)
	if tid != unix.Getpid() {
		_, tstart, _ := Stat(tid)
		if p, err := OpenInit(tid, tstart); p != nil || err != nil {
			t.Errorf("thread %d: %v %v, want gone", tid, p, err)
		}
	}
	if p, err := OpenInit(0, 0); p != nil || err != nil {
		t.Errorf("pid 0: %v %v, want gone", p, err)
	}

	p, err := OpenInit(pid, start)
	if err != nil || p == nil {
		t.Fatalf("the live process: %v %v", p, err)
	}
	defer p.Close()
	if err := p.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if p, err := OpenInit(pid, start); p != nil || err != nil {
		t.Errorf("after it was reaped: %v %v, want gone", p, err)
	}
}
