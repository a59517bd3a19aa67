package libcontainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/console"
	"github.com/husk-runtime/husk/libcontainer/criu"
	"github.com/husk-runtime/husk/libcontainer/notify"
	"github.com/husk-runtime/husk/libcontainer/proc"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// RestoreOpts is everything `husk restore` passes to Restore.
type RestoreOpts struct {
	Root    string // --root
	ID      string
	Bundle  string // absolute
	Config  *configs.Config
	PidFile string
	// ConsoleSocket receives the restored pty's master (process.terminal).
	ConsoleSocket string
	// Stdin, Stdout, Stderr replace the checkpointed process's stdio
	// pipes (descriptors.json).
	Stdin, Stdout, Stderr *os.File
	CNI                   cni.Options
	Rootless              Rootless
	Criu                  *criu.Options
	NoSubreaper           bool
	// Notify: the config binds the state dir's notify directory (package
	// notify), made here before CRIU restores the mounts.
	Notify bool
}

// Restore makes container o.ID again from CRIU's images in
// o.Criu.ImagePath: a state directory, cgroups and network as a create
// makes them; CRIU restores the processes, their namespaces and mounts
// into them. It returns the container running. On any failure everything
// it made is undone.
func Restore(o RestoreOpts) (*Container, error) {
	network, err := checkNew(o.ID, o.Config)
	if err != nil {
		return nil, err
	}
	if err := checkRestoreConfig(o); err != nil {
		return nil, err
	}
	if err := o.Criu.Check(); err != nil {
		return nil, err
	}
	binary, err := criu.FindBinary(o.Criu.Binary)
	if err != nil {
		return nil, err
	}
	stdio, err := readDescriptors(o.Criu.ImagePath)
	if err != nil {
		return nil, err
	}
	if !o.NoSubreaper {
		if err := proc.SetSubreaper(); err != nil {
			return nil, err
		}
	}
	c, err := newContainer(o.Root, o.ID, func() error { return restoreOnto(o.Root, o.ID) })
	if err != nil {
		return nil, err
	}
	if err := c.restore(o, network, binary, stdio); err != nil {
		c.undoCreate()
		return nil, fmt.Errorf("restore container %s: %w", o.ID, err)
	}
	return c, nil
}

// restoreOnto is the table's refusal of a restore onto the existing id.
func restoreOnto(root, id string) error {
	st := Running
	if c, err := LoadLifecycle(root, id); err == nil {
		st = c.Status()
		c.Close()
	}
	return refuse(OpRestore, id, st)
}

// checkRestoreConfig refuses what a restore cannot do with the config
// and flags it was given.
func checkRestoreConfig(o RestoreOpts) error {
	p := o.Config.Process
	switch {
	case p.Terminal && o.ConsoleSocket == "":
		return errors.New("process.terminal: restore needs --console-socket to pass the restored pty on")
	case !p.Terminal && o.ConsoleSocket != "":
		return fmt.Errorf("--console-socket %s: process.terminal is false, there is no pty to pass", o.ConsoleSocket)
	}
	if ns, ok := o.Config.Namespace(configs.NEWCGROUP); ok && ns.Path != "" {
		return fmt.Errorf("linux.namespaces: cgroup path %s: CRIU cannot join a cgroup namespace", ns.Path)
	}
	return nil
}

// readDescriptors reads descriptors.json, which checkpoint wrote: what
// the process's fds 0-2 were. A missing or empty image directory fails
// here, naming the file.
func readDescriptors(images string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(images, "inventory.img")); err != nil {
		return nil, fmt.Errorf("--image-path %s: no checkpoint there: %w", images, err)
	}
	path := filepath.Join(images, descriptorsFile)
	data, err := readSmall(path, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("--image-path: %w", err)
	}
	return parseDescriptors(path, data)
}

// parseDescriptors reads descriptors.json: at most three names, of fds
// 0-2 (an entry past them would hand CRIU one of its own fds, the RPC
// socket or a namespace, as the process's).
func parseDescriptors(path string, data []byte) ([]string, error) {
	var fds []string
	if err := json.Unmarshal(data, &fds); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(fds) > 3 {
		return nil, fmt.Errorf("%s: %d descriptors, at most 3 (fds 0-2)", path, len(fds))
	}
	return fds, nil
}

// readSmall reads a file of at most max bytes.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return data, err
}

func (c *Container) restore(o RestoreOpts, network *cni.Request, binary string, fds []string) error {
	if o.Notify {
		if err := notify.MakeDir(c.dir); err != nil {
			return err
		}
	}
	cfg, err := c.attachNetwork(o.Config, network, o.CNI)
	if err != nil {
		return err
	}
	cfg = o.Rootless.withDelegatedCgroup(cfg, o.ID)
	c.State = newState(o.ID, o.Bundle, cfg)
	cg, err := c.recordCgroups(cfg, o.Rootless)
	if err != nil {
		return err
	}
	place, err := placeCgroups(cg, cfg, o.Rootless)
	if err != nil {
		return err
	}
	defer place.close()
	images, work, err := openCriuDirs(o.Criu)
	if err != nil {
		return err
	}
	defer images.Close()
	defer work.Close()
	opts := o.Criu.RPC(images, work, restoreLog, cfg.Annotations)
	o.Criu.RestoreRPC(opts)
	root, unmount, err := criuRoot(c.dir, cfg.Rootfs)
	if err != nil {
		return err
	}
	defer unmount()
	opts.Root = criu.String(root)
	if err := rootfs.Mountpoints(cfg); err != nil {
		return err
	}
	opts.ExtMnt = externalMounts(cfg, 0)
	extra, err := restoreNamespaces(cfg, opts)
	defer closeFiles(extra)
	if err != nil {
		return err
	}
	for i, f := range fds {
		if strings.HasPrefix(f, "pipe:") {
			opts.InheritFd = append(opts.InheritFd, criu.InheritFd{Key: f, Fd: int32(i)})
		}
	}
	enter := func(pid int) error {
		if err := place.join(pid); err != nil {
			return err
		}
		if err := place.limits(); err != nil {
			return err
		}
		roots, err := cgroupRoots(pid)
		opts.CgRoot = roots
		return err
	}
	stdio := [3]*os.File{o.Stdin, o.Stdout, o.Stderr}
	if err := runCriu(binary, criu.ReqRestore, opts, o.Criu, stdio, extra, c.restoreNotify(o), enter); err != nil {
		return err
	}
	if c.State.InitPid == 0 {
		return errors.New("criu restored no process (no post-restore notification)")
	}
	c.State.Config = withRestoredNamespaces(cfg, c.State.InitPid)
	if err := saveState(c.dir, c.State); err != nil {
		return err
	}
	if o.PidFile != "" {
		if err := WritePidFile(o.PidFile, c.State.InitPid); err != nil {
			return err
		}
	}
	logrus.Debugf("container %s restored, init pid %d", o.ID, c.State.InitPid)
	return nil
}

// restoreNotify handles CRIU's notifications during a restore: the
// runtime hooks once the namespaces are there, the restored init's pid,
// the pty master of a terminal, lazy pages' status.
func (c *Container) restoreNotify(o RestoreOpts) criu.Notify {
	ready := statusReady(o.Criu)
	return func(script string, pid int, fds []int) error {
		switch script {
		case "setup-namespaces":
			return c.runCreateRuntimeHooks(pid)
		case "post-restore":
			c.State.InitPid = pid
			_, c.State.InitStart, _ = proc.Stat(pid)
		case "orphan-pts-master":
			return sendRestoredPty(o.ConsoleSocket, fds)
		}
		return ready(script, pid, fds)
	}
}

// sendRestoredPty passes the pty master CRIU made to --console-socket.
func sendRestoredPty(socket string, fds []int) error {
	if len(fds) != 1 {
		closeFds(fds)
		return fmt.Errorf("orphan-pts-master came with %d descriptors, want 1", len(fds))
	}
	master := os.NewFile(uintptr(fds[0]), "pty-master")
	defer master.Close()
	if socket == "" {
		return errors.New("the checkpointed process had a terminal: restore needs --console-socket")
	}
	sock, err := console.Dial(socket)
	if err != nil {
		return fmt.Errorf("--console-socket %s: %w", socket, err)
	}
	defer sock.Close()
	return console.SendMaster(sock, master)
}

// criuRoot binds the rootfs onto ROOT/ID/criu-root: CRIU wants the root
// to be a mount point whose parent is not overmounted.
func criuRoot(dir, rootfsPath string) (string, func(), error) {
	root := filepath.Join(dir, criuRootName)
	if err := os.Mkdir(root, 0o755); err != nil {
		return "", nil, fmt.Errorf("restore: %w", err)
	}
	if err := unix.Mount(rootfsPath, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		os.Remove(root)
		return "", nil, fmt.Errorf("restore: bind the rootfs %s on %s: %w", rootfsPath, root, err)
	}
	return root, func() {
		if err := unix.Unmount(root, unix.MNT_DETACH); err != nil {
			logrus.Warnf("restore: unmount %s: %v", root, err)
		}
		os.Remove(root)
	}, nil
}

// restoreNamespaces gives CRIU the namespaces the container joins by
// path: the network and pid ones as inherited fds (CRIU's fds 4, 5, …,
// the external namespaces of the dump), the others to join.
func restoreNamespaces(cfg *configs.Config, opts *criu.Opts) ([]*os.File, error) {
	var extra []*os.File
	for _, ns := range cfg.Namespaces {
		if ns.Path == "" {
			continue
		}
		if ns.Type != configs.NEWNET && ns.Type != configs.NEWPID {
			opts.JoinNs = append(opts.JoinNs, criu.JoinNamespace{Ns: ns.Type.ProcName(), NsFile: ns.Path})
			continue
		}
		f, err := os.Open(ns.Path)
		if err != nil {
			return extra, fmt.Errorf("linux.namespaces: %s path: %w", ns.Type.ProcName(), err)
		}
		opts.InheritFd = append(opts.InheritFd, criu.InheritFd{Key: externalKey(ns.Type), Fd: int32(4 + len(extra))})
		extra = append(extra, f)
	}
	return extra, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// cgroupRoots are CRIU's cgroup roots: the cgroups of pid (CRIU itself,
// placed in the container's), one per controller ("" for cgroup v2).
func cgroupRoots(pid int) ([]criu.CgroupRoot, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil, err
	}
	return parseCgroupRoots(string(data)), nil
}

// parseCgroupRoots reads a /proc/PID/cgroup file: HIERARCHY:CONTROLLERS:PATH.
func parseCgroupRoots(data string) []criu.CgroupRoot {
	var roots []criu.CgroupRoot
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(f[1], ",") {
			roots = append(roots, criu.CgroupRoot{Ctrl: ctrl, Path: f[2]})
		}
	}
	return roots
}

// withRestoredNamespaces is cfg with every namespace the restored init
// has that husk's own process does not, and cfg does not list: CRIU
// restores a container into a time namespace of its own. An exec then
// joins it too (a process outside it could not be checkpointed again).
func withRestoredNamespaces(cfg *configs.Config, pid int) *configs.Config {
	out := *cfg
	out.Namespaces = append([]configs.Namespace(nil), cfg.Namespaces...)
	for _, t := range configs.NamespaceTypes() {
		if _, ok := cfg.Namespace(t); ok {
			continue
		}
		mine, err1 := os.Readlink("/proc/self/ns/" + t.ProcName())
		its, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, t.ProcName()))
		if err1 == nil && err2 == nil && mine != its {
			out.Namespaces = append(out.Namespaces, configs.Namespace{Type: t})
		}
	}
	return &out
}
