package libcontainer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// initRequest is what startInit needs to start one `husk init`.
type initRequest struct {
	cfg  *configs.Config    // the container's, or an exec's (see execConfig)
	msg  *bootstrap.Message // namespaces and early settings for nsexec
	exec bool               // a process exec'd into a running container
	// fifoPath is the container's exec.fifo (create only): init blocks
	// opening it until `start`.
	fifoPath string
	stdio    [3]*os.File
	// preserved are fds the process gets as 3, 4, … (--preserve-fds,
	// LISTEN_FDS); init's own fds follow them.
	preserved []*os.File
	// join puts init into the container's cgroups (before nsexec runs).
	join func(pid int) error
	// createHooks runs prestart and createRuntime when init asks (create).
	createHooks func(pid int) error
}

// startInit starts `husk init` for r and walks it through the protocol of
// libcontainer/bootstrap up to READY. It returns the pid of the process
// (also when it fails after it was forked, so the caller can kill it).
func startInit(r *initRequest) (int, error) {
	exe, release, err := selfExe()
	if err != nil {
		return 0, err
	}
	defer release()
	extras, err := newInitExtras(r.cfg)
	if err != nil {
		return 0, err
	}
	defer extras.close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("init socketpair: %w", err)
	}
	sock := os.NewFile(uintptr(fds[0]), "init-parent")
	child := os.NewFile(uintptr(fds[1]), "init-child")
	defer sock.Close()
	logR, logW, err := os.Pipe()
	if err != nil {
		child.Close()
		return 0, fmt.Errorf("log pipe: %w", err)
	}
	own := []*os.File{child, logW}
	if r.fifoPath != "" {
		fifo, err := openFifoPath(r.fifoPath)
		if err != nil {
			child.Close()
			logR.Close()
			logW.Close()
			return 0, err
		}
		own = append(own, fifo)
	}
	files := append(append(slices.Clone(r.preserved), own...), extras.files...)
	first := 3 + len(r.preserved) // init's number for own[0]
	cmd := &exec.Cmd{
		Path:       exe,
		Args:       []string{"husk", "init"},
		Env:        append(r.initEnv(first), extras.env(first+len(own))...),
		Stdin:      r.stdio[0],
		Stdout:     r.stdio[1],
		Stderr:     r.stdio[2],
		ExtraFiles: files,
	}
	err = cmd.Start()
	for _, f := range own {
		f.Close()
	}
	if err != nil {
		logR.Close()
		return 0, fmt.Errorf("start husk init: %w", err)
	}
	go forwardLogs(logR)

	// Into the cgroups before the bootstrap message: nsexec waits for it,
	// so every process it forks, and the cgroup namespace it makes, start
	// inside the container's cgroups.
	if err := r.join(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, err
	}
	pid, err := runNsexec(sock, r.msg)
	if err != nil {
		// nsexec may be blocked waiting for an answer that will not come.
		cmd.Process.Kill()
	}
	// nsexec's first process exits as soon as it has forked init.
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("nsexec: %w", werr)
	}
	if err != nil {
		return pid, err
	}
	hooks := func() error { return r.createHooks(pid) }
	return pid, configureInit(sock, r.cfg, hooks)
}

// initEnv is init's whole environment: what it is, and the numbers of its
// fds, the first of which is first.
func (r *initRequest) initEnv(first int) []string {
	env := []string{
		bootstrap.EnvInitPipe + "=" + strconv.Itoa(first),
		bootstrap.EnvLogPipe + "=" + strconv.Itoa(first+1),
	}
	if r.fifoPath != "" {
		env = append(env, bootstrap.EnvFifoFd+"="+strconv.Itoa(first+2))
	}
	if r.exec {
		env = append(env, bootstrap.EnvInitType+"="+bootstrap.InitTypeExec)
	}
	return env
}

// bootstrapMessage is what nsexec needs from cfg: new namespaces as clone
// flags, joined ones as paths (user first), id maps, early settings.
func bootstrapMessage(cfg *configs.Config) *bootstrap.Message {
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
	return m
}

func idMapText(maps []configs.IDMap) string {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%d %d %d\n", m.ContainerID, m.HostID, m.Size)
	}
	return b.String()
}

// runNsexec sends the bootstrap message and answers nsexec until it
// reports the pid of the forked init.
func runNsexec(sock *os.File, msg *bootstrap.Message) (int, error) {
	if _, err := sock.Write(msg.Encode()); err != nil {
		return 0, fmt.Errorf("send bootstrap message: %w", err)
	}
	for {
		t, payload, err := bootstrap.Recv(sock)
		if err != nil {
			return 0, initGone("nsexec", err)
		}
		switch t {
		case bootstrap.SyncUsermapPls:
			pid, err := bootstrap.ParsePid(payload)
			if err != nil {
				return 0, err
			}
			if err := writeIDMaps(pid, msg); err != nil {
				return 0, err
			}
			if err := bootstrap.Send(sock, bootstrap.SyncUsermapAck, nil); err != nil {
				return 0, err
			}
		case bootstrap.SyncPid:
			return bootstrap.ParsePid(payload)
		case bootstrap.SyncError:
			return 0, errors.New(string(payload))
		default:
			return 0, fmt.Errorf("nsexec sent unexpected %s", t)
		}
	}
}

// writeIDMaps writes a new user namespace's maps for nsexec, which cannot
// write them itself from inside the namespace.
func writeIDMaps(pid int, msg *bootstrap.Message) error {
	for _, f := range []struct{ name, data string }{{"uid_map", msg.UIDMap}, {"gid_map", msg.GIDMap}} {
		path := fmt.Sprintf("/proc/%d/%s", pid, f.name)
		if err := os.WriteFile(path, []byte(f.data), 0); err != nil {
			return fmt.Errorf("write %s %q: %w", path, f.data, err)
		}
	}
	return nil
}

// configureInit sends the config to the Go init and waits for READY,
// running the create hooks when init asks for them on the way.
func configureInit(sock *os.File, cfg *configs.Config, createHooks func() error) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	if err := bootstrap.Send(sock, bootstrap.SyncConfig, data); err != nil {
		return initGone("init", err)
	}
	for {
		t, payload, err := bootstrap.Recv(sock)
		if err != nil {
			return initGone("init", err)
		}
		switch t {
		case bootstrap.SyncReady:
			return nil
		case bootstrap.SyncError:
			return errors.New(string(payload))
		case bootstrap.SyncCreateHooks:
			if err := createHooks(); err != nil {
				return err
			}
			if err := bootstrap.Send(sock, bootstrap.SyncCreateHooksDone, nil); err != nil {
				return initGone("init", err)
			}
		default:
			return fmt.Errorf("init sent unexpected %s", t)
		}
	}
}

// initGone words a broken init socket: init died without saying why.
func initGone(stage string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
		return fmt.Errorf("%s exited without reporting an error (see its output above)", stage)
	}
	return fmt.Errorf("%s: %w", stage, err)
}

// forwardLogs re-logs init's JSON log lines at their level.
func forwardLogs(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var e struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			logrus.Debugf("init: %s", sc.Text())
			continue
		}
		lvl, err := logrus.ParseLevel(e.Level)
		if err != nil {
			lvl = logrus.InfoLevel
		}
		logrus.StandardLogger().Log(lvl, "init: "+e.Msg)
	}
}
