// Command ptrace-attach is the attack of husk's security suite on a
// waiting container init: run inside the container, it tries
// PTRACE_ATTACH on the pid it is given. It prints "attached" and exits 0
// when the kernel let it (the attack worked: it could now inject code),
// or prints the error and exits 1. Built static (CGO_ENABLED=0), so it
// runs in a busybox rootfs.
//
//	ptrace-attach PID
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ptrace-attach PID")
		os.Exit(2)
	}
	pid, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptrace-attach:", err)
		os.Exit(2)
	}
	// ptrace requests must come from the attaching thread.
	runtime.LockOSThread()
	if err := syscall.PtraceAttach(pid); err != nil {
		fmt.Printf("ptrace-attach %d: %v\n", pid, err)
		os.Exit(1)
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, syscall.WALL, nil)
	_ = syscall.PtraceDetach(pid)
	fmt.Printf("attached to %d\n", pid)
}
