package libcontainer

import (
	"errors"
	"fmt"
	"strings"
)

// Status is where a container is in its life. It is never stored: it is
// read off the system (is init alive, are its cgroups frozen, does
// exec.fifo still exist) each time, so a crash cannot leave it stale.
//
// Every command that acts on a container asks the table below first
// (Container.check). Generated from transitions; TestStatusComment
// keeps the two equal:
//
//	command                 created            running            paused             stopped
//	start                   running            refused (1)        refused (2)        refused (3)
//	kill                    created            running            paused             refused (4)
//	pause                   paused             paused             refused (5)        refused (4)
//	resume                  refused (6)        refused (6)        running (7)        refused (4)
//	exec                    created            running            refused (8)        refused (9)
//	exec (--ignore-paused)  created            running            paused             refused (9)
//	update                  created            running            paused             refused (4)
//	events                  created            running            paused             refused (4)
//	delete                  gone               refused (10)       refused (10)       gone
//	delete --force          gone               gone               gone               gone
//	checkpoint              refused (11)       stopped (12)       stopped (12)       refused (11)
//	checkpoint (keep)       refused (11)       running            paused             refused (11)
//	restore                 refused (13)       refused (13)       refused (13)       refused (13)
//
//	(1) cannot start an already running container
//	(2) cannot start a container in the paused state
//	(3) cannot start a container that has stopped
//	(4) container not running
//	(5) container ID already paused
//	(6) container not paused
//	(7) or created, if it was paused before start
//	(8) cannot exec in a paused container (use --ignore-paused to override)
//	(9) cannot exec in a stopped container
//	(10) cannot delete container ID that is not stopped: STATUS
//	(11) Container cannot be checkpointed in STATUS state
//	(12) then deleted, as runc does: restore takes the id again
//	(13) container ID already exists
//
// Besides the table, a running or created container becomes stopped when
// its init exits; restore makes a container that is running (CRIU
// restored its processes), and refuses an id that exists. (kill's row
// says what kill itself does: it sends a signal, the status follows the
// process.)
type Status int

const (
	Created Status = iota
	Running
	Paused
	Stopped
	// gone is where delete leaves a container: no status at all.
	gone
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
	case gone:
		return "gone"
	}
	return fmt.Sprintf("unknown(%d)", int(s))
}

// statuses are the statuses a container can be found in, in table order.
var statuses = []Status{Created, Running, Paused, Stopped}

// Op is a command that acts on a container, as the table names it.
type Op string

const (
	OpStart            Op = "start"
	OpKill             Op = "kill"
	OpPause            Op = "pause"
	OpResume           Op = "resume"
	OpExec             Op = "exec"
	OpExecIgnorePaused Op = "exec (--ignore-paused)"
	OpUpdate           Op = "update"
	OpEvents           Op = "events"
	OpDelete           Op = "delete"
	OpDeleteForce      Op = "delete --force"
	OpCheckpoint       Op = "checkpoint"
	// OpCheckpointKeep is checkpoint --leave-running or --pre-dump.
	OpCheckpointKeep Op = "checkpoint (keep)"
	// OpRestore is restore onto an id that exists: always refused.
	OpRestore Op = "restore"
)

// noteResumeFromCreated qualifies resume's outcome: the freezer does not
// know whether the process had started.
const noteResumeFromCreated = "or created, if it was paused before start"

// noteCheckpointDeletes: CRIU ends the processes, then checkpoint
// deletes the container as runc does, so restore can take its id.
const noteCheckpointDeletes = "then deleted, as runc does: restore takes the id again"

// A refusal is why a command cannot act on a container in some status,
// in the words runc uses for it (clients match some of them). ID and
// STATUS in text stand for the container's id and status.
type refusal struct {
	text string
	err  error // the sentinel the error wraps, if clients test for it
}

var (
	refuseStartRunning = &refusal{text: "cannot start an already running container"}
	refuseStartPaused  = &refusal{text: "cannot start a container in the paused state"}
	refuseStartStopped = &refusal{text: "cannot start a container that has stopped"}
	refuseNotRunning   = &refusal{err: ErrNotRunning}
	refuseAlreadyPause = &refusal{text: "container ID already paused"}
	refuseNotPaused    = &refusal{err: ErrNotPaused}
	refuseExecPaused   = &refusal{text: "cannot exec in a paused container (use --ignore-paused to override)"}
	refuseExecStopped  = &refusal{text: "cannot exec in a stopped container"}
	refuseDeleteLive   = &refusal{text: "cannot delete container ID that is not stopped: STATUS"}
	refuseCheckpoint   = &refusal{text: "Container cannot be checkpointed in STATUS state"}
	refuseRestoreOnto  = &refusal{text: "container ID already exists"}
)

// words is the refusal's text as the table shows it.
func (r *refusal) words() string {
	if r.err != nil {
		return r.err.Error()
	}
	return r.text
}

// error is the refusal for container id in status st.
func (r *refusal) error(id string, st Status) error {
	if r.err != nil {
		return r.err
	}
	return errors.New(strings.NewReplacer("ID", id, "STATUS", st.String()).Replace(r.text))
}

// outcome is one cell of the table: where op takes a container (to), or
// why it is refused; note qualifies to.
type outcome struct {
	to      Status
	refused *refusal
	note    string
}

func to(s Status) outcome                { return outcome{to: s} }
func refused(r *refusal) outcome         { return outcome{refused: r} }
func toNoted(s Status, n string) outcome { return outcome{to: s, note: n} }

// transitions is the state machine: for each command, the outcome from
// each status, in the order of statuses (created, running, paused,
// stopped). A command whose row keeps the status does not change it.
var transitions = []struct {
	op  Op
	out [4]outcome
}{
	{OpStart, [4]outcome{to(Running), refused(refuseStartRunning), refused(refuseStartPaused), refused(refuseStartStopped)}},
	{OpKill, [4]outcome{to(Created), to(Running), to(Paused), refused(refuseNotRunning)}},
	{OpPause, [4]outcome{to(Paused), to(Paused), refused(refuseAlreadyPause), refused(refuseNotRunning)}},
	{OpResume, [4]outcome{refused(refuseNotPaused), refused(refuseNotPaused), toNoted(Running, noteResumeFromCreated), refused(refuseNotRunning)}},
	{OpExec, [4]outcome{to(Created), to(Running), refused(refuseExecPaused), refused(refuseExecStopped)}},
	{OpExecIgnorePaused, [4]outcome{to(Created), to(Running), to(Paused), refused(refuseExecStopped)}},
	{OpUpdate, [4]outcome{to(Created), to(Running), to(Paused), refused(refuseNotRunning)}},
	{OpEvents, [4]outcome{to(Created), to(Running), to(Paused), refused(refuseNotRunning)}},
	{OpDelete, [4]outcome{to(gone), refused(refuseDeleteLive), refused(refuseDeleteLive), to(gone)}},
	{OpDeleteForce, [4]outcome{to(gone), to(gone), to(gone), to(gone)}},
	{OpCheckpoint, [4]outcome{refused(refuseCheckpoint), toNoted(Stopped, noteCheckpointDeletes), toNoted(Stopped, noteCheckpointDeletes), refused(refuseCheckpoint)}},
	{OpCheckpointKeep, [4]outcome{refused(refuseCheckpoint), to(Running), to(Paused), refused(refuseCheckpoint)}},
	{OpRestore, [4]outcome{refused(refuseRestoreOnto), refused(refuseRestoreOnto), refused(refuseRestoreOnto), refused(refuseRestoreOnto)}},
}

// lookup is op's outcome from status st.
func lookup(op Op, st Status) (outcome, error) {
	for _, t := range transitions {
		if t.op != op {
			continue
		}
		for i, s := range statuses {
			if s == st {
				return t.out[i], nil
			}
		}
		return outcome{}, fmt.Errorf("%s: no container is %s", op, st)
	}
	return outcome{}, fmt.Errorf("unknown command %q", op)
}

// refuse is the table's refusal of op on container id in status st, or
// nil when the table allows it.
func refuse(op Op, id string, st Status) error {
	out, err := lookup(op, st)
	if err != nil {
		return err
	}
	if out.refused != nil {
		return out.refused.error(id, st)
	}
	return nil
}

// check reads the container's status and refuses op in it, in the
// table's words. It returns the status it read.
func (c *Container) check(op Op) (Status, error) {
	st := c.Status()
	return st, refuse(op, c.ID, st)
}

// Check refuses op on the container in its current status (for commands,
// such as events, that act on a container without a method of their own).
func (c *Container) Check(op Op) error {
	_, err := c.check(op)
	return err
}

// The words of these errors are part of husk's interface: containerd's
// shim maps kill and delete failures by substring ("does not exist",
// "container not running", "already exists"), as it does for runc.
var (
	ErrNotExist   = errors.New("does not exist")
	ErrExist      = errors.New("already exists")
	ErrNotRunning = errors.New("container not running")
	ErrNotPaused  = errors.New("container not paused")
)

// ErrInvalidConfig is in every refusal of a config (runc's key phrase,
// which scripts look for); ConfigError puts it in front.
var ErrInvalidConfig = errors.New("invalid configuration")

// ConfigError is err, a refusal of config.json (its text names the field
// and the value), as husk words it: "invalid configuration: config.json:
// linux.namespaces[2].type: unknown "netwrk"".
func ConfigError(err error) error {
	return fmt.Errorf("%w: config.json: %w", ErrInvalidConfig, err)
}

func notExist(id string) error { return fmt.Errorf("container %s %w", id, ErrNotExist) }
