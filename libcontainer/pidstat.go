package libcontainer

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// procStat reads the state letter and start time (clock ticks since boot)
// of pid from /proc/PID/stat. The start time tells a live process apart
// from a later one that reused its pid.
func procStat(pid int) (state byte, start uint64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold spaces or ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0, 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	fields := bytes.Fields(data[i+2:])
	// fields[0] is field 3 (state); starttime is field 22.
	if len(fields) < 20 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	start, err = strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: starttime: %w", pid, err)
	}
	return fields[0][0], start, nil
}

// alive reports whether pid is still the process that started at start
// and has not exited (a zombie counts as exited).
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	state, s, err := procStat(pid)
	if err != nil {
		return false
	}
	return s == start && state != 'Z' && state != 'X'
}

// waitGone blocks until pid has exited, using a pidfd.
func waitGone(pid int, start uint64) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if err == unix.ESRCH {
			return nil
		}
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	if !alive(pid, start) { // the pid may have been reused before the open
		return nil
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("poll pidfd of %d: %w", pid, err)
		}
		return nil
	}
}

// killAndReap kills pid, a child (or orphan: husk is a subreaper) of this
// process, and reaps it so that no zombie is left. It undoes a start that
// failed after the process was made.
func killAndReap(pid int) {
	unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return
		}
	}
}

// setSubreaper makes this process adopt its orphaned descendants, so the
// container's init (a grandchild: nsexec forks it) can be waited for and
// reaped by create and run.
func setSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

// deathSignal waits a moment for pid, a child of this process (or an
// orphan: husk is a subreaper) whose init socket just closed, to exit,
// and returns the signal that killed it, or 0. It leaves the zombie for
// the caller to reap: /proc/PID/stat's exit_code (field 52) is read.
func deathSignal(pid int) unix.Signal {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 2000); n != 1 || err != nil {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(data, ')')
	if err != nil || i < 0 || i+2 >= len(data) {
		return 0
	}
	fields := bytes.Fields(data[i+2:])
	if len(fields) < 50 { // fields[0] is field 3; exit_code is field 52
		return 0
	}
	code, err := strconv.Atoi(string(fields[49]))
	if err != nil {
		return 0
	}
	if ws := unix.WaitStatus(code); ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// nsPid is pid as its own pid namespace sees it (the last NSpid of
// /proc/PID/status): 1 for a container's init in a pid namespace of its
// own. pid itself when it cannot be read.
func nsPid(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return pid
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if f := bytes.Fields(line); len(f) > 1 && string(f[0]) == "NSpid:" {
			if n, err := strconv.Atoi(string(f[len(f)-1])); err == nil {
				return n
			}
		}
	}
	return pid
}
