// Command subreaper runs a command as a child subreaper: the processes
// orphaned under it (a `husk exec -d` process once its husk has exited)
// are reaped at once, not by a host's PID 1 that may take seconds. A
// container's init in a pid namespace of its own cannot finish exiting
// before every process of the namespace is reaped, so a `delete` of a
// container with such a process waits for that reaper.
//
//	subreaper CMD [ARG...]
//
// It exits with CMD's status once CMD has exited, leaving what still
// runs to its own parent.
package main

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: subreaper CMD [ARG...]")
		os.Exit(2)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper: prctl:", err)
		os.Exit(2)
	}
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(2)
	}
	p, err := os.StartProcess(path, os.Args[1:], &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(2)
	}
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "subreaper: wait4:", err)
			os.Exit(2)
		}
		if pid != p.Pid {
			continue
		}
		if ws.Signaled() {
			os.Exit(128 + int(ws.Signal()))
		}
		os.Exit(ws.ExitStatus())
	}
}
