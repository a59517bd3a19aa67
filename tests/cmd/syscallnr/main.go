// Command syscallnr makes the raw system call with each number given and
// prints, one line each, "NR errno-name" ("0" when it succeeded). Built
// static, it runs inside test containers to see what a seccomp filter
// returns for a syscall, e.g. one newer than the filter's profile.
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	for _, arg := range os.Args[1:] {
		nr, err := strconv.Atoi(arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "syscallnr: %q is not a number\n", arg)
			os.Exit(2)
		}
		// Arguments that make a known syscall fail harmlessly if it runs.
		_, _, errno := syscall.RawSyscall(uintptr(nr), ^uintptr(0), ^uintptr(0), ^uintptr(0))
		name := "0"
		if errno != 0 {
			name = unix.ErrnoName(errno)
		}
		fmt.Println(arg, name)
	}
}
