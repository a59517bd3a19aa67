package seccomp

import (
	"encoding/json"
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ListenerMessage is what the runtime-spec says the seccomp listener
// receives with the notify fd: the container process state, as JSON, with
// fds naming the one fd sent. pid is the process's pid in the runtime's
// pid namespace. The parent builds it (libcontainer/launch: Listener) for
// the launcher, which only has to send it once the filter is in place.
func ListenerMessage(metadata string, pid int, state specs.State) ([]byte, error) {
	msg, err := json.Marshal(specs.ContainerProcessState{
		Version:  specs.Version,
		Fds:      []string{specs.SeccompFdName},
		Pid:      pid,
		Metadata: metadata,
		State:    state,
	})
	if err != nil {
		return nil, fmt.Errorf("linux.seccomp.listenerPath: encode the process state: %w", err)
	}
	return msg, nil
}
