// Package proc names a container's processes by pid safely: the identity
// of a pid (its start time in /proc/PID/stat), a pidfd on a recorded init
// that can reach no other process, reaping, and the pid a process has in
// its own pid namespace.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Stat reads the state letter and start time (clock ticks since boot)
// of pid from /proc/PID/stat. The start time tells a live process apart
// from a later one that reused its pid.
func Stat(pid int) (state byte, start uint64, err error) {
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

// Alive reports whether pid is still the process that started at start
// and has not exited (a zombie counts as exited).
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	state, s, err := Stat(pid)
	if err != nil {
		return false
	}
	return s == start && state != 'Z' && state != 'X'
}

// Init is a pidfd on a container's init, opened only while the
// recorded pid still names it: signals and waits through it can reach no
// other process, whatever happens to the pid meanwhile.
type Init struct {
	pid int
	fd  int
}

// OpenInit opens the process pid that started at start (clock ticks, as
// recorded in the state). nil without an error means it is gone: the pid
// is free, names a thread of another process (pidfd_open says EINVAL, or
// ENOENT since Linux 6.9; a pid being released says so too), or names
// another process (its start time differs).
func OpenInit(pid int, start uint64) (*Init, error) {
	if pid <= 0 {
		return nil, nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch err {
	case nil:
	case unix.ESRCH, unix.EINVAL, unix.ENOENT:
		return nil, nil
	default:
		return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	p := &Init{pid: pid, fd: fd}
	// The start time read after the open is the fd's process's as long
	// as that process has not exited by the poll after it: until then
	// the pid stays its own.
	_, s, err := Stat(pid)
	if err != nil || s != start || p.Exited() {
		p.Close()
		return nil, nil
	}
	return p, nil
}

// Exited reports whether the process has exited (a zombie has).
func (p *Init) Exited() bool {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}

// Signal sends sig; a process that has exited meanwhile is ESRCH.
func (p *Init) Signal(sig unix.Signal) error {
	return unix.PidfdSendSignal(p.fd, sig, nil, 0)
}

// Wait blocks until the process has exited.
func (p *Init) Wait() error {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("poll pidfd of %d: %w", p.pid, err)
		}
		return nil
	}
}

// Close closes the pidfd.
func (p *Init) Close() { unix.Close(p.fd) }

// KillAndReap kills pid, a child (or orphan: husk is a subreaper) of this
// process, and reaps it so that no zombie is left. It undoes a start that
// failed after the process was made.
func KillAndReap(pid int) {
	unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return
		}
	}
}

// SetSubreaper makes this process adopt its orphaned descendants, so the
// container's init (a grandchild: nsexec forks it) can be waited for and
// reaped by create and run.
func SetSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

// NsPid is pid as its own pid namespace sees it (the last NSpid of
// /proc/PID/status): 1 for a container's init in a pid namespace of its
// own. pid itself when it cannot be read.
func NsPid(pid int) int {
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
