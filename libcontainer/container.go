// Package libcontainer is the parent side of a container: the Container
// API (create, start, exec, signal, pause, delete), the state store
// (state.go), the state machine (status.go). Starting `husk init` and
// walking it through the protocol is package launch; what runs inside
// `husk init` is package initproc; the contract between the two sides is
// package bootstrap.
package libcontainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/proc"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Container is a container loaded from the state store and locked: no
// other husk command acts on it until Close.
type Container struct {
	ID    string
	dir   string
	lock  *os.File
	State *State
}

// Load opens and locks the container id under root.
func Load(root, id string) (*Container, error) {
	return load(root, id, loadFull)
}

// LoadForExec is Load for exec: its Config lacks the mounts, devices,
// hooks and cgroup limits (see decodeForExec), and its state is never
// saved.
func LoadForExec(root, id string) (*Container, error) {
	return load(root, id, loadExec)
}

// LoadLifecycle is Load for the commands that read the container's state
// but not its process: start, state, kill, delete, pause and resume. Its
// Config lacks the process, mounts, devices, seccomp and cgroup limits
// (cheaper to decode, see decodePartial), and its state is never saved.
func LoadLifecycle(root, id string) (*Container, error) {
	return load(root, id, loadLifecycle)
}

func load(root, id string, kind loadKind) (*Container, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	dir := filepath.Join(root, id)
	lock, err := lockDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notExist(id)
	}
	if err != nil {
		return nil, err
	}
	st, err := loadState(dir, kind)
	if err != nil {
		lock.Close()
		if errors.Is(err, fs.ErrNotExist) {
			// Removed while we waited for the lock, or a create that
			// never finished: either way there is no container.
			return nil, notExist(id)
		}
		return nil, err
	}
	return &Container{ID: id, dir: dir, lock: lock, State: st}, nil
}

// Relock locks again a container this process created and unlocked while
// it waited for the process (husk run), and keeps its State when
// state.json is still that container's (same init pid and start time):
// nothing but update writes it meanwhile, and only the cgroup limits,
// which delete does not read. A container deleted meanwhile, or deleted
// and made again under the same id, is ErrNotExist. Cheaper than a load:
// only two fields of state.json are decoded.
func (c *Container) Relock() error {
	lock, err := lockDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return notExist(c.ID)
	}
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(c.dir, stateFile))
	if err != nil {
		lock.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return notExist(c.ID)
		}
		return err
	}
	var init struct {
		Pid   int    `json:"init_pid"`
		Start uint64 `json:"init_start"`
	}
	if err := json.Unmarshal(data, &init); err != nil {
		lock.Close()
		return fmt.Errorf("%s: %w", filepath.Join(c.dir, stateFile), err)
	}
	if init.Pid != c.State.InitPid || init.Start != c.State.InitStart {
		lock.Close()
		return notExist(c.ID)
	}
	c.lock = lock
	return nil
}

// Close releases the container's lock.
func (c *Container) Close() {
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
}

// Status reads the container's status off the system.
func (c *Container) Status() Status {
	if !proc.Alive(c.State.InitPid, c.State.InitStart) {
		return Stopped
	}
	if c.frozen() {
		return Paused
	}
	if _, err := os.Lstat(filepath.Join(c.dir, fifoName)); err == nil {
		return Created
	}
	return Running
}

// OCIState is the runtime-spec state of the container, as `state` prints.
func (c *Container) OCIState() specs.State {
	st := c.Status()
	pid := c.State.InitPid
	if st == Stopped {
		pid = 0
	}
	return specs.State{
		Version:     c.State.OCIVersion,
		ID:          c.ID,
		Status:      specs.ContainerState(st.String()),
		Pid:         pid,
		Bundle:      c.State.Bundle,
		Annotations: c.State.Annotations,
	}
}

// Signal sends sig to the container's init. A stopped container is an
// error with runc's words, which clients match.
//
// Signal 0 is runc's liveness check: nil while init lives, ErrNotRunning
// once it is gone. SIGKILL to a container without its own pid namespace
// goes to every process of its cgroups, as in runc: they do not die with
// init, and are killed even when init is already gone.
func (c *Container) Signal(sig unix.Signal) error {
	if sig == unix.SIGKILL && c.sharesHostPidNamespace() && c.Status() == Stopped {
		return c.killLeftovers()
	}
	if _, err := c.check(OpKill); err != nil {
		return err
	}
	if sig == unix.SIGKILL && c.sharesHostPidNamespace() {
		logrus.Debugf("container %s has no pid namespace: SIGKILL to every process of its cgroups", c.ID)
		return c.SignalAll(sig)
	}
	// Through a pidfd: a pid reused since the status check is never
	// signalled.
	p, err := proc.OpenInit(c.State.InitPid, c.State.InitStart)
	if err != nil {
		return fmt.Errorf("kill %d with %s: %w", c.State.InitPid, unix.SignalName(sig), err)
	}
	if p == nil {
		return ErrNotRunning
	}
	defer p.Close()
	if err := p.Signal(sig); err != nil {
		if err == unix.ESRCH {
			return ErrNotRunning
		}
		return fmt.Errorf("kill %d with %s: %w", c.State.InitPid, unix.SignalName(sig), err)
	}
	if sig == unix.SIGKILL {
		c.thaw() // a paused container dies only once thawed
	}
	return nil
}

// sharesHostPidNamespace reports whether the container has no pid
// namespace of its own (none in linux.namespaces, new or joined).
func (c *Container) sharesHostPidNamespace() bool {
	if c.State == nil || c.State.Config == nil {
		return false
	}
	_, ok := c.State.Config.Namespace(configs.NEWPID)
	return !ok
}

// killLeftovers SIGKILLs what is left in a stopped container's cgroups;
// with nothing left it is ErrNotRunning, as for any stopped container.
func (c *Container) killLeftovers() error {
	m, err := c.cgroups()
	if err != nil {
		return err
	}
	if !m.Exists() {
		return ErrNotRunning
	}
	if pids, err := m.Pids(); err != nil || len(pids) == 0 {
		return ErrNotRunning
	}
	logrus.Debugf("container %s: init is gone; SIGKILL to what is left in its cgroups", c.ID)
	return c.SignalAll(unix.SIGKILL)
}

// Delete removes the container. A created container is killed first (it
// never ran); a running one only with force.
func (c *Container) Delete(force bool) error {
	op := OpDelete
	if force {
		op = OpDeleteForce
	}
	st, err := c.check(op)
	if err != nil {
		return err
	}
	c.returnNetDevices() // while init still holds the namespace
	if st != Stopped {
		if err := c.kill(); err != nil {
			if !force {
				return err
			}
			// The cgroups' SIGKILL below ends whatever is left: a forced
			// delete always finishes the cleanup.
			logrus.Warnf("delete --force %s: %v", c.ID, err)
		}
	}
	return c.destroy(force)
}

// kill sends SIGKILL to init and waits until it is gone. A recorded pid
// that is free, or names another task by now, means init is gone
// (openInit): nothing is signalled.
func (c *Container) kill() error {
	p, err := proc.OpenInit(c.State.InitPid, c.State.InitStart)
	if err != nil {
		return fmt.Errorf("kill container %s (pid %d): %w", c.ID, c.State.InitPid, err)
	}
	if p == nil {
		logrus.Debugf("container %s: init (pid %d) is gone", c.ID, c.State.InitPid)
		return nil
	}
	defer p.Close()
	if err := p.Signal(unix.SIGKILL); err != nil && err != unix.ESRCH {
		return fmt.Errorf("kill container %s (pid %d): %w", c.ID, c.State.InitPid, err)
	}
	c.thaw() // a frozen process dies only once thawed
	return p.Wait()
}

// destroy removes everything husk made for the container. With force a
// failed CNI DEL is only logged.
func (c *Container) destroy(force bool) error {
	if err := c.destroyCgroups(); err != nil {
		return err
	}
	if err := c.detachNetwork(force); err != nil {
		return err
	}
	if err := removeStateDir(c.dir); err != nil {
		return fmt.Errorf("remove state dir %s: %w", c.dir, err)
	}
	c.runPoststop()
	return nil
}

// Summary is the container's state as `state` and `list` print it: the
// runtime-spec state plus runc's rootfs, created and owner, in runc's
// field order (pid is 0 once stopped, never omitted).
type Summary struct {
	OCIVersion  string            `json:"ociVersion"`
	ID          string            `json:"id"`
	Pid         int               `json:"pid"`
	Status      string            `json:"status"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Owner       string            `json:"owner"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Summarize is the container's full state.
func (c *Container) Summarize() Summary {
	oci := c.OCIState()
	return Summary{
		OCIVersion: oci.Version, ID: oci.ID, Pid: oci.Pid, Status: string(oci.Status),
		Bundle: oci.Bundle, Rootfs: c.State.Rootfs, Created: c.State.Created,
		Owner: c.State.Owner, Annotations: oci.Annotations,
	}
}

// List summarises every container under root, sorted by id. A container
// whose state cannot be read (a create in progress) is left out.
func List(root string) ([]Summary, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	var out []Summary
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		st, err := loadState(dir, loadLifecycle)
		if err != nil {
			continue
		}
		c := &Container{ID: e.Name(), dir: dir, State: st}
		out = append(out, c.Summarize())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
