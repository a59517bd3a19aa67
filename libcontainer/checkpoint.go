package libcontainer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/criu"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Checkpoint and restore go through CRIU (package criu); husk tells it
// what it cannot see for itself, as runc does:
//   - mounts whose source is outside the container (binds, devices, the
//     /dev/null bound over masked files) are CRIU "external" mounts,
//     keyed by their destination;
//   - a namespace the container joined by path (network, pid) is
//     external: dumped as a reference, given back as an open fd;
//   - the container's stdio pipes are named in descriptors.json in the
//     image directory, so a restore hands CRIU the new caller's pipes;
//   - the cgroups: CRIU freezes the container's cgroup for the dump, and
//     a restore puts CRIU itself into the new container's cgroups (made
//     as a create makes them) before it restores the processes there.

const (
	dumpLog         = "dump.log"
	restoreLog      = "restore.log"
	descriptorsFile = "descriptors.json"
)

// Checkpoint dumps the container with CRIU into o.ImagePath. Unless it
// leaves the container running (--leave-running, --pre-dump), CRIU ends
// its processes, and the container is deleted, as runc does, so that a
// restore can take its id again.
func (c *Container) Checkpoint(o *criu.Options) error {
	op := OpCheckpoint
	if o.LeaveRunning || o.PreDump {
		op = OpCheckpointKeep
	}
	if _, err := c.check(op); err != nil {
		return err
	}
	if err := o.Check(); err != nil {
		return err
	}
	binary, err := criu.FindBinary(o.Binary)
	if err != nil {
		return err
	}
	if err := o.CheckParent(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.ImagePath, 0o700); err != nil {
		return fmt.Errorf("--image-path %s: %w", o.ImagePath, err)
	}
	images, work, err := openCriuDirs(o)
	if err != nil {
		return err
	}
	defer images.Close()
	defer work.Close()
	cfg := c.State.Config
	opts := o.RPC(images, work, dumpLog, c.State.Annotations)
	o.DumpRPC(opts)
	opts.Pid = criu.Int32(int32(c.State.InitPid))
	opts.Root = criu.String(cfg.Rootfs)
	if err := externalNamespaces(cfg, opts); err != nil {
		return err
	}
	if fc := c.freezerPath(); fc != "" {
		opts.FreezeCgroup = criu.String(fc)
	}
	kind := criu.ReqDump
	if o.PreDump {
		kind = criu.ReqPreDump
	} else {
		opts.ExtMnt = externalMounts(cfg, c.State.InitPid)
		if err := writeDescriptors(o.ImagePath, c.State.InitPid); err != nil {
			return err
		}
	}
	if err := runCriu(binary, kind, opts, o, [3]*os.File{}, nil, statusReady(o)); err != nil {
		return fmt.Errorf("checkpoint container %s: %w", c.ID, err)
	}
	if op == OpCheckpointKeep {
		return nil
	}
	return c.Delete(true)
}

// openCriuDirs opens the image directory and the work directory (nil
// when it is the image directory).
func openCriuDirs(o *criu.Options) (images, work *os.File, err error) {
	images, err = os.Open(o.ImagePath)
	if err != nil {
		return nil, nil, fmt.Errorf("--image-path: %w", err)
	}
	if o.WorkPath == "" {
		return images, nil, nil
	}
	if err := os.MkdirAll(o.WorkPath, 0o700); err != nil {
		images.Close()
		return nil, nil, fmt.Errorf("--work-path %s: %w", o.WorkPath, err)
	}
	if work, err = os.Open(o.WorkPath); err != nil {
		images.Close()
		return nil, nil, fmt.Errorf("--work-path: %w", err)
	}
	return images, work, nil
}

// runCriu runs one CRIU request to its end; a failure quotes CRIU's log.
func runCriu(binary string, kind criu.ReqType, opts *criu.Opts, o *criu.Options, stdio [3]*os.File, extra []*os.File, notify criu.Notify, started ...func(pid int) error) error {
	s, err := criu.Start(binary, stdio, extra)
	if err != nil {
		return err
	}
	for _, fn := range started {
		if err := fn(s.Pid()); err != nil {
			s.Kill()
			return err
		}
	}
	_, err = s.Do(kind, opts, notify)
	if err != nil {
		s.Kill()
		logFile := ""
		if opts.LogFile != nil {
			logFile = *opts.LogFile
		}
		return withCriuLog(err, o, logFile)
	}
	return s.Close(kind == criu.ReqPreDump)
}

// withCriuLog adds the error lines of CRIU's log, and where it is, to err.
func withCriuLog(err error, o *criu.Options, logFile string) error {
	dir := o.WorkPath
	if dir == "" {
		dir = o.ImagePath
	}
	path := filepath.Join(dir, logFile)
	lines := criu.LogErrors(path, 6)
	for _, l := range lines {
		logrus.Warnf("%s: %s", path, l)
	}
	if len(lines) > 0 {
		return fmt.Errorf("%w: %s (log: %s)", err, strings.TrimSpace(lines[len(lines)-1]), path)
	}
	return fmt.Errorf("%w (log: %s)", err, path)
}

// statusReady writes --status-fd's \0 when CRIU's lazy-pages server is
// ready, and closes it.
func statusReady(o *criu.Options) criu.Notify {
	return func(script string, _ int, fds []int) error {
		closeFds(fds)
		if script == "status-ready" && o.StatusFd >= 0 {
			if _, err := unix.Write(o.StatusFd, []byte{0}); err != nil {
				logrus.Warnf("--status-fd %d: %v", o.StatusFd, err)
			}
			unix.Close(o.StatusFd)
			o.StatusFd = -1
		}
		return nil
	}
}

func closeFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// freezerPath is the cgroup CRIU freezes for the dump: the container's
// v2 directory, or its v1 freezer.
func (c *Container) freezerPath() string {
	if p, ok := c.State.CgroupPaths[""]; ok {
		return p
	}
	return c.State.CgroupPaths["freezer"]
}

// externalKey is the CRIU key of an external namespace of type t.
func externalKey(t configs.NamespaceType) string {
	return "extRoot" + strings.ToUpper(t.ProcName()[:1]) + t.ProcName()[1:] + "NS"
}

// externalTypes are the namespaces that, joined by path, CRIU takes as
// external (net and pid); the others it joins at restore (join_ns).
var externalTypes = []configs.NamespaceType{configs.NEWNET, configs.NEWPID}

// externalNamespaces names, for a dump, the namespaces the container
// joined by path: CRIU leaves them out and refers to them by inode.
func externalNamespaces(cfg *configs.Config, opts *criu.Opts) error {
	for _, t := range externalTypes {
		ns, ok := cfg.Namespace(t)
		if !ok || ns.Path == "" {
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(ns.Path, &st); err != nil {
			return fmt.Errorf("linux.namespaces: %s path %s: %w", t.ProcName(), ns.Path, err)
		}
		opts.External = append(opts.External, fmt.Sprintf("%s[%d]:%s", t.ProcName(), st.Ino, externalKey(t)))
	}
	return nil
}

// externalMounts are the container's mounts from outside it, keyed by
// their destination: binds, device nodes, and masked files (bound over
// with /dev/null; a masked directory is a tmpfs, which CRIU dumps
// itself). For a dump (pid, the init whose masked paths are looked at)
// each maps to itself; for a restore (pid 0) to its source now.
func externalMounts(cfg *configs.Config, pid int) []criu.ExtMountMap {
	var ext []criu.ExtMountMap
	add := func(key, val string) {
		ext = append(ext, criu.ExtMountMap{Key: key, Val: val})
	}
	for _, m := range cfg.Mounts {
		if m.Device != "bind" {
			continue
		}
		if pid > 0 {
			add(m.Destination, m.Destination)
		} else {
			add(m.Destination, m.Source)
		}
	}
	for _, d := range cfg.Devices {
		add(d.Path, d.Path)
	}
	if pid == 0 {
		if len(cfg.MaskPaths) > 0 {
			add("/dev/null", "/dev/null")
		}
		return ext
	}
	for _, p := range cfg.MaskPaths {
		st, err := os.Stat(fmt.Sprintf("/proc/%d/root%s", pid, filepath.Clean("/"+p)))
		if err == nil && !st.IsDir() {
			add(p, "/dev/null")
		}
	}
	return ext
}

// writeDescriptors records what init's fds 0-2 are (pipe:[INODE],
// /dev/null, a pty) in the image directory: a restore gives CRIU its own
// caller's stdio in place of the pipes.
func writeDescriptors(dir string, pid int) error {
	fds := make([]string, 3)
	for i := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, i))
		if err != nil {
			l = "/dev/null"
		}
		fds[i] = l
	}
	data, err := json.Marshal(fds)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, descriptorsFile), data, 0o600); err != nil {
		return fmt.Errorf("--image-path: %w", err)
	}
	return nil
}
