package launch

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

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
