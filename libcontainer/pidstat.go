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
