package libcontainer

import "fmt"

// Status is where a container is in its life. The allowed transitions, in
// one place:
//
//	created  --start-->   running
//	created  --kill/exit--> stopped
//	running  --exit-->    stopped
//	running  --pause-->   paused   (cgroups issue)
//	paused   --resume-->  running
//	stopped  --delete-->  (gone)
//
// Status is never stored: it is read off the system (is init alive, does
// exec.fifo still exist) each time, so a crash cannot leave it stale.
type Status int

const (
	Created Status = iota
	Running
	Paused
	Stopped
)

func (s Status) String() string {
	switch s {
	case Created:
		return "created"
	case Running:
		return "running"
	case Paused:
		return "paused"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("unknown(%d)", int(s))
}
