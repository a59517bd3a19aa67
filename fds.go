package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
)

// passedFiles are the fds husk hands on to the process as 3, 4, …, as
// runc does: first the socket-activation fds it was given (LISTEN_FDS,
// when LISTEN_PID is husk; the process then gets the env returned,
// LISTEN_FDS and LISTEN_PID=1), then --preserve-fds N more. Call it before
// husk opens any file of its own, which could take a closed fd's number.
func passedFiles(cmd *cli.Command) (files []*os.File, env []string, err error) {
	listen, err := listenFds()
	if err != nil {
		return nil, nil, err
	}
	n := cmd.Int("preserve-fds")
	if n < 0 {
		return nil, nil, fmt.Errorf("--preserve-fds %d: must not be negative", n)
	}
	for fd := 3; fd < 3+listen+int(n); fd++ {
		// An fd husk's caller passed has no FD_CLOEXEC (or exec would have
		// closed it); one with it is husk's own (the Go runtime's; its
		// cgroup CPU files are closed before main: init.go's go:debug).
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
			what := "--preserve-fds " + strconv.Itoa(int(n))
			if fd < 3+listen {
				what = "LISTEN_FDS=" + os.Getenv("LISTEN_FDS")
			}
			return nil, nil, fmt.Errorf("%s: fd %d is not open", what, fd)
		}
		files = append(files, os.NewFile(uintptr(fd), "passed-fd-"+strconv.Itoa(fd)))
	}
	if listen > 0 {
		env = []string{"LISTEN_FDS=" + strconv.Itoa(listen), "LISTEN_PID=1"}
	}
	return files, env, nil
}

// listenFds is the number of socket-activation fds passed to husk itself.
func listenFds() (int, error) {
	s := os.Getenv("LISTEN_FDS")
	if s == "" || os.Getenv("LISTEN_PID") != strconv.Itoa(os.Getpid()) {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("LISTEN_FDS=%q: not a number of fds", s)
	}
	return n, nil
}
