package launch

import (
	"os"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootless"
)

// The drivers of a start of `husk init` (Start). Every start runs the
// same protocol up to nsexec's PID (package bootstrap's table); two small
// drivers say what differs:
//
//	Steps         after HELLO             after PID
//	CreateSteps   -                       the limits (now, or at CREATE_HOOKS),
//	                                      CONFIG, pid 1's requests, READY
//	ExecSteps     GO                      READY or ERROR
//
//	CgroupEntry   init gets in            when
//	bornIn        by itself: born in the  cgroupfs driver (create and exec)
//	              v2 directory (clone3),
//	              "0" into v1 tasks files
//	movedIn       moved by pid, before    systemd driver (systemd makes the
//	              its bootstrap message   scope with init in it), rootless on
//	                                      v1, exec --cgroup
//
// A rootless start is one of these with an IDMapper that runs
// newuidmap/newgidmap (rootless.MapWriter) for nsexec's USERMAP_PLS.

// Steps is what a start does once nsexec is running.
type Steps interface {
	// exec reports an exec (husk init's type, and how its death is read).
	exec() bool
	// atHello runs once nsexec said HELLO and the binary's view is sealed.
	atHello(sock *credReader)
	// afterPid runs the rest of the protocol with the process pid.
	afterPid(sock *credReader, pid int) error
}

// CreateSteps are a create's: CONFIG for pid 1, the cgroup limits and
// the runtime hooks at the one moment the protocol gives them.
type CreateSteps struct {
	Config *configs.Config // init's: without the cgroup settings
	// Limits applies linux.resources to the container's cgroups; Hooks
	// runs prestart and createRuntime for init (pid). Each runs once:
	// at CREATE_HOOKS when AskHooks, or else before CONFIG.
	Limits func() error
	Hooks  func(pid int) error
	// AskHooks: there are prestart or createRuntime hooks, or a pids
	// limit, which counts what pid 1 forks (the createContainer hooks)
	// and so waits until the rootfs is mounted, as runc's procHooks
	// (bootstrap.RootfsAskHooks).
	AskHooks bool
}

func (CreateSteps) exec() bool               { return false }
func (CreateSteps) atHello(sock *credReader) {}

func (s CreateSteps) afterPid(sock *credReader, pid int) error {
	atMount := func() error {
		if err := s.Limits(); err != nil {
			return err
		}
		return s.Hooks(pid)
	}
	if !s.AskHooks {
		// Init will not ask: the limits are applied now, while its Go
		// runtime starts.
		if err := atMount(); err != nil {
			return err
		}
		return configureInit(sock, s.Config, pid, nil)
	}
	return configureInit(sock, s.Config, pid, atMount)
}

// ExecSteps are an exec's: the launcher lets its process exec after GO,
// then says READY or ERROR.
type ExecSteps struct {
	Config *configs.Config
}

func (ExecSteps) exec() bool { return true }

// atHello sends GO blind: a launcher that failed before has said why in
// an ERROR frame, which runNsexec reads next.
func (ExecSteps) atHello(sock *credReader) { _ = bootstrap.Send(sock, bootstrap.SyncGo, nil) }

func (s ExecSteps) afterPid(sock *credReader, pid int) error {
	return awaitReady(sock, s.Config, pid, nil)
}

// CgroupEntry is how a started husk init gets into the container's
// cgroups.
type CgroupEntry interface {
	// files are what init gets to enter them by itself: the v2
	// directory it is born in and the v1 tasks files nsexec writes "0"
	// into (none: it is moved in).
	files() (dir *os.File, tasks []*os.File)
	// enter moves init (child) in, when it did not get in by itself
	// (born: clone3 put it in dir).
	enter(child int, born bool) error
}

// CgroupsFor is the cgroup driver of a start: born in the cgroups entry
// opens (the cgroupfs driver), or moved in by join where there is no
// entry. A nil join and no entry: no cgroups (rootless without any).
func CgroupsFor(entry *cgroup.Entry, join func(pid int) error) CgroupEntry {
	if entry == nil {
		return movedIn(join)
	}
	return bornIn{entry, join}
}

// bornIn: init enters the cgroups itself (cgroup.Entry: no wait for the
// kernel's RCU grace period), and is moved in by join only where the
// kernel refused clone3 into the directory.
type bornIn struct {
	entry *cgroup.Entry
	join  func(pid int) error
}

func (b bornIn) files() (*os.File, []*os.File) { return b.entry.Dir, b.entry.Tasks }

func (b bornIn) enter(child int, born bool) error {
	if !b.entry.NeedsMove(born) {
		return nil
	}
	return b.join(child)
}

// movedIn: init is moved into the cgroups by pid (nil: there are none).
type movedIn func(pid int) error

func (movedIn) files() (*os.File, []*os.File) { return nil, nil }

func (m movedIn) enter(child int, _ bool) error {
	if m == nil {
		return nil
	}
	return m(child)
}

// IDMapper writes the id maps of a new user namespace (nsexec's pid):
// a rootless.MapWriter, which runs newuidmap/newgidmap for a caller
// without root (the rootless driver).
type IDMapper interface {
	Write(pid int) error
}

// MapperOf is w as an IDMapper: nil (no user namespace to map) when w is.
func MapperOf(w *rootless.MapWriter) IDMapper {
	if w == nil {
		return nil
	}
	return w
}
