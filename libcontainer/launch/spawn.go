package launch

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/seccomp"
	"github.com/husk-runtime/husk/libcontainer/trace"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Request is what Start needs to start one `husk init`. Two drivers
// shape it (drivers.go): Steps, what follows nsexec's PID (a create or an
// exec), and Cgroups, how init gets into the container's cgroups (born
// in them, or moved in by pid: systemd, rootless).
type Request struct {
	Config *configs.Config    // the container's, or an exec's
	Msg    *bootstrap.Message // namespaces and early settings for nsexec
	// Plan is the process the launcher sets up and execs; Listener, when
	// set, gives its seccomp listener's message (see Listener).
	Plan     *bootstrap.Plan
	Listener func() (*bootstrap.PlanListener, error)
	// Maps writes a new user namespace's id maps (nil: none is made).
	Maps    IDMapper
	Steps   Steps
	Cgroups CgroupEntry
	// FifoPath is the container's exec.fifo (create only): init blocks
	// opening it until `start`.
	FifoPath string
	Stdio    [3]*os.File
	// Preserved are fds the process gets as 3, 4, … (--preserve-fds,
	// LISTEN_FDS); init's own fds follow them.
	Preserved []*os.File
}

// Start starts `husk init` for r and walks it through the protocol of
// libcontainer/bootstrap up to READY. It returns the pid of the process
// (also when it fails after it was forked, so the caller can kill it):
// the container's init, or the exec'd process.
func Start(r *Request) (int, error) {
	if err := r.addListener(); err != nil {
		return 0, err
	}
	view, err := huskBinaryView()
	if err != nil {
		return 0, err
	}
	defer view.release()
	extras, err := dialInitSockets(r.Config)
	if err != nil {
		return 0, err
	}
	defer extras.close()
	sock, child, err := credSocket("init")
	if err != nil {
		return 0, err
	}
	defer sock.Close()
	logR, logW, err := credSocket("log")
	if err != nil {
		child.Close()
		return 0, err
	}
	own := []*os.File{child, logW}
	if r.FifoPath != "" {
		fifo, err := openFifoPath(r.FifoPath)
		if err != nil {
			child.Close()
			logR.Close()
			logW.Close()
			return 0, err
		}
		own = append(own, fifo)
	}
	files := append(append(slices.Clone(r.Preserved), own...), extras.files...)
	first := bootstrap.FirstFd(len(r.Preserved)) // init's number for own[0]
	dir, tasks := r.Cgroups.files()
	r.Msg.CgroupTasks = nil
	for _, f := range tasks {
		r.Msg.CgroupTasks = append(r.Msg.CgroupTasks, uint32(3+len(files)))
		files = append(files, f)
	}
	msg, err := r.Msg.Encode()
	if err != nil {
		for _, f := range own {
			f.Close()
		}
		logR.Close()
		return 0, err
	}
	exec := r.Steps.exec()
	closeOnExecAll() // only what the child is given reaches init
	cmd, born, err := startInCgroup(dir, view.path, []string{"husk", "init"},
		bootstrap.InitEnv(first, r.FifoPath != "", exec, logrus.IsLevelEnabled(logrus.DebugLevel), extras.names),
		append(r.Stdio[:], files...))
	for _, f := range own {
		f.Close()
	}
	if err != nil {
		logR.Close()
		if errors.Is(err, unix.EAGAIN) && born {
			return 0, fmt.Errorf("start husk init in cgroup %s: clone3: %w: no room for the process under the container's pids.max", dir.Name(), err)
		}
		return 0, fmt.Errorf("start husk init: %w", err)
	}
	// An exec's writers are its launcher, and on the log socket the
	// process it forks (known at PID); a container's init is not checked
	// (see docs/architecture.md).
	var initPeers, logPeers *peers
	if exec {
		initPeers, logPeers = newPeers(cmd.pid), newPeers(cmd.pid)
		initPeers.settle()
		defer logPeers.settle()
	}
	logs := &credReader{File: logR, what: "husk init's log", peers: logPeers}
	forwards.add(logs)
	go forwardLogs(logs)
	trace.Mark("spawn")
	pid, err := r.converse(&credReader{File: sock, what: "init socket", peers: initPeers}, cmd.pid, born, msg, view.seal, logPeers)
	var gone *errGone
	if err != nil && pid == 0 && !errors.As(err, &gone) {
		// nsexec may be blocked waiting for an answer that will not come.
		cmd.kill()
	}
	werr := cmd.wait()
	switch {
	case errors.As(err, &gone) || (err == nil && werr != nil):
		return pid, r.diagnose(err, werr, cmd, pid)
	case err != nil:
		return pid, err
	}
	return pid, nil
}

// converse runs the protocol with the started init (child): into the
// cgroups, the bootstrap message and the PLAN, HELLO (the binary's view
// is sealed then), nsexec's steps up to PID, then the driver's steps.
func (r *Request) converse(sock *credReader, child int, born bool, msg []byte, seal func() error, logs *peers) (int, error) {
	// Into the cgroups before the bootstrap message: nsexec waits for it,
	// so every process it forks, and the cgroup namespace it makes, start
	// inside the container's cgroups (born in them, nsexec's first step
	// is to write itself into the v1 ones).
	if err := r.Cgroups.enter(child, born); err != nil {
		return 0, err
	}
	logNamespaces(r.Msg)
	if err := sendBootstrap(sock, msg); err != nil {
		return 0, err
	}
	// The process comes right after: an exec's launcher sets it up before
	// it forks, and sends PID, then READY (or ERROR); a container's pid 1
	// builds the container, and sets the process up once it is built.
	if err := sendPlan(sock, r.Plan); err != nil {
		return 0, err
	}
	// At HELLO the last exec of the husk binary has happened and nsexec's
	// image is mapped: the view is sealed, so nothing in the container
	// may run the binary again (finding 5 of issue 26).
	if err := awaitHello(sock); err != nil {
		return 0, err
	}
	if err := seal(); err != nil {
		return 0, err
	}
	r.Steps.atHello(sock)
	pid, err := runNsexec(sock, r.Maps)
	trace.Mark("nsexec")
	if err != nil {
		return pid, err
	}
	if logs != nil { // an exec's process logs its failed execve
		logs.allow(pid)
		logs.settle()
	}
	return pid, r.Steps.afterPid(sock, pid)
}

// addListener puts the seccomp listener's message into the plan.
func (r *Request) addListener() error {
	if r.Listener == nil {
		return nil
	}
	l, err := r.Listener()
	if err != nil {
		return err
	}
	r.Plan.Listener = l
	return nil
}

// sendPlan sends the PLAN frame.
func sendPlan(sock *credReader, plan *bootstrap.Plan) error {
	b, err := plan.Encode()
	if err != nil {
		return err
	}
	if err := bootstrap.Send(sock, bootstrap.SyncPlan, b); err != nil {
		return initGone("nsexec", err)
	}
	return nil
}

// startInCgroup starts exe (argv, env; files become its fds 0, 1, 2, 3,
// …, a nil stdio file /dev/null), born in the cgroup dir when there is
// one (clone3 with CLONE_INTO_CGROUP: no moment in husk's own cgroup, no
// write to cgroup.procs). A kernel that refuses it (before 5.7, or a
// cgroup it cannot enter) gets a plain start: born reports which it was.
//
// syscall.ForkExec, not os/exec: the os package's first start of a child
// in a process forks an extra one to probe pidfd support, a whole process
// creation on every create, run and exec.
func startInCgroup(dir *os.File, exe string, argv, env []string, files []*os.File) (c *initChild, born bool, err error) {
	fds := make([]uintptr, len(files))
	for i, f := range files {
		if f == nil && i < 3 {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return nil, false, err
			}
			defer null.Close()
			f = null
		}
		fds[i] = f.Fd()
	}
	attr := &syscall.ProcAttr{Env: env, Files: fds, Sys: &syscall.SysProcAttr{}}
	if dir != nil {
		attr.Sys = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dir.Fd())}
		pid, err := syscall.ForkExec(exe, argv, attr)
		if err == nil || errors.Is(err, unix.EAGAIN) {
			return &initChild{pid: pid}, true, err // EAGAIN: the cgroup's pids.max is reached
		}
		logrus.Debugf("clone3 into cgroup %s: %v; starting husk init outside and moving it in", dir.Name(), err)
		attr.Sys = &syscall.SysProcAttr{}
	}
	pid, err := syscall.ForkExec(exe, argv, attr)
	return &initChild{pid: pid}, false, err
}

// initChild is nsexec's first process, reaped with wait4 (not through a
// pidfd: see startInCgroup); sig is the signal that killed it, if one did.
type initChild struct {
	pid int
	sig unix.Signal
}

func (c *initChild) kill() { _ = unix.Kill(c.pid, unix.SIGKILL) }

// wait reaps the process: nil when it exited 0.
func (c *initChild) wait() error {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(c.pid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait for pid %d: %w", c.pid, err)
		}
		break
	}
	switch {
	case ws.Signaled():
		c.sig = ws.Signal()
		return fmt.Errorf("signal: %v", ws.Signal())
	case ws.ExitStatus() != 0:
		return fmt.Errorf("exit status %d", ws.ExitStatus())
	}
	return nil
}

// diagnose words how husk init died when it closed the init socket
// without a word (err), or when nsexec's first process failed (werr). That process
// (an exec's launcher) is ours to wait for; a container's pid 1 is an
// orphan of ours by now. A launcher killed by SIGSYS was killed by the
// seccomp filter it had just loaded: say so, naming its default action.
func (r *Request) diagnose(err, werr error, cmd *initChild, pid int) error {
	sig := cmd.sig
	if sig == 0 && pid > 0 && !r.Steps.exec() {
		sig = deathSignal(pid)
	}
	switch {
	case sig == unix.SIGSYS && r.Config.Seccomp != nil:
		return fmt.Errorf("linux.seccomp: husk init was killed by SIGSYS right after loading the filter (%s): "+
			"the profile kills a syscall the launcher makes before the process's execve (see docs/architecture.md)", seccomp.Killers(r.Config.Seccomp))
	case sig != 0:
		return fmt.Errorf("husk init was killed by signal %d (%v) before the process was ready", int(sig), sig)
	case err == nil:
		return fmt.Errorf("nsexec: %w", werr)
	}
	return err
}

// BootstrapMessage is what nsexec needs from cfg: new namespaces as clone
// flags, joined ones as paths (user first), id maps, early settings.
func BootstrapMessage(cfg *configs.Config) (*bootstrap.Message, error) {
	m := &bootstrap.Message{TimeOffsets: cfg.TimensOffsets}
	for _, t := range configs.NamespaceTypes() {
		ns, ok := cfg.Namespace(t)
		switch {
		case !ok:
		case ns.Path == "":
			m.CloneFlags |= uint32(t.CloneFlag())
		default:
			m.NsPaths = append(m.NsPaths, t.ProcName()+":"+ns.Path)
		}
	}
	if cfg.NewNamespace(configs.NEWUSER) {
		m.UIDMap = idMapText(cfg.UIDMappings)
		m.GIDMap = idMapText(cfg.GIDMappings)
	}
	if p := cfg.Process; p != nil && p.OomScoreAdj != nil {
		m.OomScoreAdj = fmt.Sprint(*p.OomScoreAdj)
	}
	var err error
	m.Affinity, err = InitialAffinity(cfg.Process)
	return m, err
}

func idMapText(maps []configs.IDMap) string {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%d %d %d\n", m.ContainerID, m.HostID, m.Size)
	}
	return b.String()
}

// logNamespaces says at debug level which namespaces nsexec joins and
// which it makes.
func logNamespaces(m *bootstrap.Message) {
	if !logrus.IsLevelEnabled(logrus.DebugLevel) {
		return
	}
	var made []string
	for _, t := range configs.NamespaceTypes() {
		if uintptr(m.CloneFlags)&t.CloneFlag() != 0 {
			made = append(made, t.ProcName())
		}
	}
	logrus.Debugf("namespaces: join %v, make %v (clone flags %#x)", m.NsPaths, made, m.CloneFlags)
}
