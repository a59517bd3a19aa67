// Command pid-reuse makes a given pid, free now, name a new task: a thread
// of this process or a child process. husk's tests use it to give a dead
// container init's pid to another task, as pid reuse does, and check that
// `delete --force` neither fails on it nor kills it.
//
//	pid-reuse thread|process PID
//
// It writes PID-1 to /proc/sys/kernel/ns_last_pid (under the file's flock,
// CRIU's convention among users of the file) and at once starts the task;
// another process taking PID first makes it exit 2, to be retried. On
// success it prints "TID STARTTIME" (the task's start, field 22 of its
// stat) and keeps the task alive until its stdin closes.
package main

/*
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int tid;

static void *thread_main(void *arg) {
	tid = syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

// take writes last to fd (ns_last_pid) and starts the task at once: its
// tid, or -1.
static int take(int fd, const char *last, int thread) {
	pthread_t t;
	pid_t pid;

	if (pwrite(fd, last, strlen(last), 0) < 0)
		return -1;
	if (thread) {
		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			return -1;
		while (tid == 0)
			usleep(100);
		return tid;
	}
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "thread" && os.Args[1] != "process") {
		fmt.Fprintln(os.Stderr, "usage: pid-reuse thread|process PID")
		os.Exit(1)
	}
	want, err := strconv.Atoi(os.Args[2])
	if err != nil || want < 2 {
		fmt.Fprintln(os.Stderr, "pid-reuse: bad pid", os.Args[2])
		os.Exit(1)
	}
	f, err := os.OpenFile("/proc/sys/kernel/ns_last_pid", os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid-reuse:", err)
		os.Exit(1)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Fprintln(os.Stderr, "pid-reuse: flock:", err)
		os.Exit(1)
	}
	last := C.CString(strconv.Itoa(want - 1))
	defer C.free(unsafe.Pointer(last))
	got := int(C.take(C.int(f.Fd()), last, C.int(boolInt(os.Args[1] == "thread"))))
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if got != want {
		fmt.Fprintf(os.Stderr, "pid-reuse: got %d, not %d\n", got, want)
		if got > 0 && os.Args[1] == "process" {
			syscall.Kill(got, syscall.SIGKILL)
		}
		os.Exit(2)
	}
	start, err := startTime(os.Getpid(), got)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid-reuse:", err)
		os.Exit(1)
	}
	fmt.Println(got, start)
	io.Copy(io.Discard, os.Stdin)
	if os.Args[1] == "process" {
		syscall.Kill(got, syscall.SIGKILL)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startTime reads field 22 of the task's stat (/proc/PID/task/TID for a
// thread of this process; /proc/TID for a child).
func startTime(self, tid int) (string, error) {
	path := fmt.Sprintf("/proc/%d/task/%d/stat", self, tid)
	if _, err := os.Stat(path); err != nil {
		path = fmt.Sprintf("/proc/%d/stat", tid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return "", fmt.Errorf("%s: malformed", path)
	}
	f := bytes.Fields(data[i+2:])
	if len(f) < 20 {
		return "", fmt.Errorf("%s: %d fields", path, len(f))
	}
	return string(f[19]), nil
}
