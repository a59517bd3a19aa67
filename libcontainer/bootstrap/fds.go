package bootstrap

// #include "bootstrap.h"
import "C"

import "strconv"

// What `husk init` inherits besides the init socket's frames: its fds,
// named by environment variables, and exec.fifo.
//
//	fd          env variable       what                          who uses it
//	0-2                            the process's stdio           the process
//	3 ..        LISTEN_FDS etc.    --preserve-fds, LISTEN_FDS    the process
//	first       EnvInitPipe        init socketpair (this table)  nsexec, Go init
//	first+1     EnvLogPipe         JSON log lines to the parent  Go init
//	first+2     EnvFifoFd          exec.fifo, O_PATH (create)    Go init
//	next        EnvConsoleFd       --console-socket, connected   Go init
//	next        EnvListenerFd      seccomp listener, connected   Go init
//	            EnvInitType        InitTypeExec for an exec      nsexec, Go init
//
// first is FirstFd(number of preserved fds). The parent passes the files
// in this order (exec.Cmd.ExtraFiles) and InitEnv names them.
//
// exec.fifo: init blocks opening it for writing until `husk start` opens
// it for reading; then init runs the startContainer hooks and writes, in
// one write (atomic on a pipe), FifoGo when it goes on to exec the
// process, or else the reason it cannot (at most FifoMsgMax bytes).
const (
	EnvInitPipe   = C.HUSK_ENV_INITPIPE
	EnvLogPipe    = C.HUSK_ENV_LOGPIPE
	EnvFifoFd     = C.HUSK_ENV_FIFOFD
	EnvConsoleFd  = C.HUSK_ENV_CONSOLEFD
	EnvListenerFd = C.HUSK_ENV_LISTENERFD
	EnvInitType   = C.HUSK_ENV_INITTYPE

	// InitTypeExec in EnvInitType: init stands in for a process exec'd
	// into a running container.
	InitTypeExec = C.HUSK_INITTYPE_EXEC

	FifoGo     = '0'
	FifoMsgMax = 4000
)

// FirstFd is init's number for the init socket when the process keeps
// preserved fds after its stdio.
func FirstFd(preserved int) int { return 3 + preserved }

// InitEnv names init's fds, numbered from first in the table's order:
// the init socket, the log pipe, exec.fifo when fifo is set, then one fd
// per name in extras (EnvConsoleFd, EnvListenerFd). exec marks an init
// that runs a process in an existing container.
func InitEnv(first int, fifo, exec bool, extras []string) []string {
	env := []string{EnvInitPipe + "=" + strconv.Itoa(first), EnvLogPipe + "=" + strconv.Itoa(first+1)}
	next := first + 2
	if fifo {
		env = append(env, EnvFifoFd+"="+strconv.Itoa(next))
		next++
	}
	for _, name := range extras {
		env = append(env, name+"="+strconv.Itoa(next))
		next++
	}
	if exec {
		env = append(env, EnvInitType+"="+InitTypeExec)
	}
	return env
}
