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

// holePid stands for the process's pid in a message rendered before the
// pid is known; no real pid is this large.
const holePid = 1<<40 + 424242

// Listener is the seccomp listener's message for the plan (the container
// process state, which the runtime-spec says the listener receives with
// the notify fd), nil when cfg's filter notifies no one. pid is the
// process's pid in the runtime's pid namespace; 0 when only the launcher
// will know it (an exec's forked process): the launcher puts it in.
func Listener(cfg *configs.Config, pid int, state specs.State) (*bootstrap.PlanListener, error) {
	s := cfg.Seccomp
	if s == nil || !s.UsesNotify() {
		return nil, nil
	}
	at := pid
	if pid == 0 {
		at = holePid
	}
	msg, err := seccomp.ListenerMessage(s.ListenerMetadata, at, state)
	if err != nil {
		return nil, err
	}
	if len(msg) > MaxListenerMsg {
		return nil, fmt.Errorf("linux.seccomp.listenerPath: the container process state is %s, over the %s husk sends", size(len(msg)), size(MaxListenerMsg))
	}
	l := &bootstrap.PlanListener{Msg: msg, PidAt: bootstrap.PlanNoHole}
	if pid != 0 {
		return l, nil
	}
	key := []byte(`"pid":` + strconv.Itoa(holePid))
	i := bytes.Index(msg, key)
	if i < 0 || bytes.Count(msg, key) != 1 {
		return nil, fmt.Errorf("linux.seccomp.listenerPath: the process state has no single place for the pid")
	}
	i += len(`"pid":`)
	l.Msg = append(msg[:i:i], msg[i+len(strconv.Itoa(holePid)):]...)
	l.PidAt = uint32(i)
	return l, nil
}
