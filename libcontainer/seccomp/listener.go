package seccomp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"

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

// Killers names what in s kills a process with SIGSYS, for the error of
// a launcher killed by its own filter: "defaultAction SCMP_ACT_KILL", or
// "SCMP_ACT_KILL_PROCESS on clone, fork" (SCMP_ACT_TRAP counts: an
// unhandled SIGSYS kills too).
func Killers(s *configs.Seccomp) string {
	kills := func(action string) bool {
		return strings.HasPrefix(action, "SCMP_ACT_KILL") || action == "SCMP_ACT_TRAP"
	}
	var parts []string
	if kills(s.DefaultAction) {
		parts = append(parts, "defaultAction "+s.DefaultAction)
	}
	for _, r := range s.Syscalls {
		if kills(r.Action) {
			parts = append(parts, r.Action+" on "+strings.Join(r.Names, ", "))
		}
	}
	if len(parts) == 0 {
		return "defaultAction " + s.DefaultAction
	}
	return strings.Join(parts, "; ")
}
