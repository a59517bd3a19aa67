// Command pid-scanner is the attack of husk's security suite on the
// privileged moments of a start: run inside a container with
// CAP_SYS_PTRACE, it scans /proc for pids over and over and tries
// to attach to each (PTRACE_SEIZE: the same permission check as
// PTRACE_ATTACH, without the SIGSTOP that a tracee execing meanwhile would
// keep pending and stop on after the detach). Whatever it attaches to must hold no capability
// outside the scanner's own sets (CapBnd, CapPrm, CapEff) and must run
// with the scanner's seccomp mode: else it prints a VIOLATION line. It
// stops when the file it is given exists, prints a summary, and exits 1
// if there was a violation. Built static (CGO_ENABLED=0), so it runs in a
// busybox rootfs.
//
//	pid-scanner STOP-FILE
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// status is what the scanner compares of a process.
type status struct {
	name                   string
	capBnd, capPrm, capEff uint64
	seccomp                string
}

func readStatus(pid string) (status, error) {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return status{}, err
	}
	var s status
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "Name":
			s.name = v
		case "CapBnd":
			s.capBnd, _ = strconv.ParseUint(v, 16, 64)
		case "CapPrm":
			s.capPrm, _ = strconv.ParseUint(v, 16, 64)
		case "CapEff":
			s.capEff, _ = strconv.ParseUint(v, 16, 64)
		case "Seccomp":
			s.seccomp = v
		}
	}
	return s, nil
}

const (
	ptraceSeize     = 0x4206
	ptraceInterrupt = 0x4207
)

func ptrace(req, pid int) error {
	if _, _, errno := syscall.Syscall6(syscall.SYS_PTRACE, uintptr(req), uintptr(pid), 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// inspect attaches to pid and, if it may, checks it against own.
func inspect(pid int, own status) (attached bool, violation string) {
	if err := ptrace(ptraceSeize, pid); err != nil {
		return false, ""
	}
	defer func() {
		// A detach wants a stopped tracee: interrupt it (no signal).
		if ptrace(ptraceInterrupt, pid) == nil {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err == nil && ws.Stopped() {
				syscall.PtraceDetach(pid)
			}
		}
	}()
	s, err := readStatus(strconv.Itoa(pid))
	if err != nil {
		return true, "" // gone
	}
	var why []string
	if extra := s.capBnd &^ own.capBnd; extra != 0 {
		why = append(why, fmt.Sprintf("CapBnd %016x has %016x beyond ours", s.capBnd, extra))
	}
	if extra := s.capPrm &^ own.capPrm; extra != 0 {
		why = append(why, fmt.Sprintf("CapPrm %016x has %016x beyond ours", s.capPrm, extra))
	}
	if extra := s.capEff &^ own.capPrm; extra != 0 {
		why = append(why, fmt.Sprintf("CapEff %016x has %016x beyond ours", s.capEff, extra))
	}
	if s.seccomp != own.seccomp {
		why = append(why, fmt.Sprintf("Seccomp %s, ours %s", s.seccomp, own.seccomp))
	}
	if len(why) == 0 {
		return true, ""
	}
	return true, fmt.Sprintf("VIOLATION pid %d (%s): %s", pid, s.name, strings.Join(why, "; "))
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pid-scanner STOP-FILE")
		os.Exit(2)
	}
	// ptrace requests must come from the attaching thread.
	runtime.LockOSThread()
	own, err := readStatus("self")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid-scanner:", err)
		os.Exit(2)
	}
	self := os.Getpid()
	fmt.Printf("scanning as CapBnd %016x CapPrm %016x Seccomp %s\n", own.capBnd, own.capPrm, own.seccomp)
	seen, attached, tries, bad := map[int]bool{}, 0, 0, 0
	for {
		if _, err := os.Stat(os.Args[1]); err == nil {
			break
		}
		d, err := os.Open("/proc")
		if err != nil {
			fmt.Fprintln(os.Stderr, "pid-scanner:", err)
			os.Exit(2)
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			pid, err := strconv.Atoi(n)
			if err != nil || pid == self {
				continue
			}
			seen[pid] = true
			tries++
			ok, v := inspect(pid, own)
			if ok {
				attached++
			}
			if v != "" {
				bad++
				fmt.Println(v)
			}
		}
	}
	fmt.Printf("pids seen %d, attach tries %d, attached %d, violations %d\n", len(seen), tries, attached, bad)
	if bad > 0 {
		os.Exit(1)
	}
}
