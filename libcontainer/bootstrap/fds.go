package bootstrap

// #include "bootstrap.h"
import "C"

import "strconv"

// The names of init's inherited fds and the bytes of exec.fifo: see the
// tables in the package comment.
const (
	EnvInitPipe   = C.HUSK_ENV_INITPIPE
	EnvLogPipe    = C.HUSK_ENV_LOGPIPE
	EnvFifoFd     = C.HUSK_ENV_FIFOFD
	EnvConsoleFd  = C.HUSK_ENV_CONSOLEFD
	EnvListenerFd = C.HUSK_ENV_LISTENERFD
	EnvInitType   = C.HUSK_ENV_INITTYPE
	EnvLogDebug   = C.HUSK_ENV_LOGDEBUG
	// EnvTraceFd names the fd of the trace file a `husk init` inherits
	// (libcontainer/trace).
	EnvTraceFd = C.HUSK_ENV_TRACEFD

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
// per name in extras (EnvConsoleFd, EnvListenerFd). exec marks an init that runs a process in an
// existing container; debug (the parent's --debug) has init send its
// debug lines (EnvLogDebug).
func InitEnv(first int, fifo, exec, debug bool, extras []string) []string {
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
	if debug {
		env = append(env, EnvLogDebug+"=1")
	}
	return env
}
