// Command report prints how its Go runtime started, for onep's tests:
// its Ps, whether onep chose them, GOMAXPROCS and the environment as Go
// code sees them, its arguments, and whether the runtime's auxiliary
// vector is the kernel's.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"

	"github.com/husk-runtime/husk/onep"
	"golang.org/x/sys/unix"
)

func main() {
	fmt.Printf("procs=%d added=%t args=%q env=%q auxv=%s\n", runtime.GOMAXPROCS(0), onep.Added(), os.Args[1:], os.Environ(), auxv())
}

// auxv compares the runtime's auxiliary vector with /proc/self/auxv.
func auxv() string {
	got, err := unix.Auxv()
	if err != nil {
		return err.Error()
	}
	raw, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return err.Error()
	}
	var want [][2]uintptr
	for r := bytes.NewReader(raw); r.Len() >= 16; {
		var pair [2]uint64
		if err := binary.Read(r, binary.NativeEndian, &pair); err != nil || pair[0] == 0 {
			break
		}
		want = append(want, [2]uintptr{uintptr(pair[0]), uintptr(pair[1])})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Sprintf("runtime %v, kernel %v", got, want)
	}
	return "kernel's"
}
