package launch

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ProcessPid stands for the process's pid in a message rendered before
// it is known (no real pid is this large): the launcher puts the pid in
// wherever it stands. A container's init is its own process: its state's
// pid is ProcessPid too.
const ProcessPid = 1<<40 + 424242

// Listener is the seccomp listener's message for the plan (the container
// process state, which the runtime-spec says the listener receives with
// the notify fd), nil when cfg's filter notifies no one. The process's
// pid in it is a hole (PidAt) that the launcher fills with the pid, in the
// runtime's pid namespace, of the process it launches.
func Listener(cfg *configs.Config, state specs.State) (*bootstrap.PlanListener, error) {
	s := cfg.Seccomp
	if s == nil || !s.UsesNotify() {
		return nil, nil
	}
	msg, err := seccomp.ListenerMessage(s.ListenerMetadata, ProcessPid, state)
	if err != nil {
		return nil, err
	}
	if len(msg) > MaxListenerMsg {
		return nil, fmt.Errorf("linux.seccomp.listenerPath: the container process state is %s, over the %s husk sends", size(len(msg)), size(MaxListenerMsg))
	}
	// Cut the stand-in out wherever it is, and note where it was.
	pid := []byte(strconv.Itoa(ProcessPid))
	l := &bootstrap.PlanListener{}
	for {
		i := bytes.Index(msg, pid)
		if i < 0 {
			l.Msg = append(l.Msg, msg...)
			break
		}
		if len(l.PidAt) == bootstrap.PlanMaxHoles {
			return nil, fmt.Errorf("linux.seccomp.listenerPath: the process state has the pid in more than %d places", bootstrap.PlanMaxHoles)
		}
		l.Msg = append(l.Msg, msg[:i]...)
		l.PidAt = append(l.PidAt, uint32(len(l.Msg)))
		msg = msg[i+len(pid):]
	}
	return l, nil
}
