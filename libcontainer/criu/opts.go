package criu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/checkpoint-restore/go-criu/v7/rpc"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
)

// Options are the flags of `husk checkpoint` and `husk restore`, with
// runc's names and defaults. Each error of Check names its flag.
type Options struct {
	Binary    string // --criu (global): the criu binary, "criu" in $PATH by default
	ImagePath string // --image-path (absolute once checked)
	WorkPath  string // --work-path; "": the image directory
	// ParentPath (--parent-path) is the previous (pre-)dump, relative to
	// the image directory, as CRIU wants it.
	ParentPath      string
	LeaveRunning    bool
	TCPEstablished  bool
	TCPSkipInFlight bool
	LinkRemap       bool
	ExtUnixSk       bool
	ShellJob        bool
	LazyPages       bool
	StatusFd        int    // --status-fd, -1: none; husk writes its \0 (CRIU's status-ready)
	PageServer      string // ADDRESS:PORT
	FileLocks       bool
	PreDump         bool
	ManageCgroups   string // soft (default), full, strict, ignore
	EmptyNs         []string
	AutoDedup       bool
	LsmProfile      string // restore: TYPE:NAME
	LsmMountContext string // restore
}

// cgroupModes are --manage-cgroups-mode's values.
var cgroupModes = map[string]rpc.CriuCgMode{
	"":       rpc.CriuCgMode_SOFT,
	"soft":   rpc.CriuCgMode_SOFT,
	"full":   rpc.CriuCgMode_FULL,
	"strict": rpc.CriuCgMode_STRICT,
	"ignore": rpc.CriuCgMode_IGNORE,
}

// ConfigAnnotation names a CRIU configuration file for one container
// (runc's annotation); "" there means none at all.
const ConfigAnnotation = "org.criu.config"

// DefaultConfigFile is read by CRIU when the annotation is absent: runc's
// file, so a host configured for runc works the same with husk.
const DefaultConfigFile = "/etc/criu/runc.conf"

// FindBinary resolves the criu binary: a missing one is named, with how to
// name another.
func FindBinary(name string) (string, error) {
	if name == "" {
		name = "criu"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("criu binary %q: %w (install criu, or name it with --criu PATH)", name, err)
	}
	return p, nil
}

// Check refuses values CRIU cannot take, naming the flag, and a caller
// without root: CRIU runs as root (rootless containers are not
// supported).
func (o *Options) Check() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("checkpoint and restore need root: CRIU cannot dump or restore a rootless container (euid %d)", os.Geteuid())
	}
	if o.ImagePath == "" {
		return errors.New("--image-path: must not be empty")
	}
	if _, ok := cgroupModes[o.ManageCgroups]; !ok {
		return fmt.Errorf("--manage-cgroups-mode %q: not soft, full, strict or ignore", o.ManageCgroups)
	}
	for _, ns := range o.EmptyNs {
		if ns != "network" {
			return fmt.Errorf("--empty-ns %q: namespace not supported (only network)", ns)
		}
	}
	if o.PageServer != "" {
		if _, _, err := o.pageServer(); err != nil {
			return err
		}
	}
	if o.StatusFd >= 0 {
		if !o.LazyPages {
			return fmt.Errorf("--status-fd %d: only with --lazy-pages", o.StatusFd)
		}
		fl, err := unix.FcntlInt(uintptr(o.StatusFd), unix.F_GETFL, 0)
		if err != nil {
			return fmt.Errorf("--status-fd %d: %w", o.StatusFd, err)
		}
		if fl&unix.O_ACCMODE == unix.O_RDONLY {
			return fmt.Errorf("--status-fd %d: not open for writing", o.StatusFd)
		}
	}
	return nil
}

// CheckParent refuses a --parent-path that is absolute or is no directory
// under the image directory.
func (o *Options) CheckParent() error {
	if o.ParentPath == "" {
		return nil
	}
	if filepath.IsAbs(o.ParentPath) {
		return fmt.Errorf("--parent-path %s: must be relative to --image-path", o.ParentPath)
	}
	p := filepath.Join(o.ImagePath, o.ParentPath)
	st, err := os.Stat(p)
	if err == nil && !st.IsDir() {
		err = unix.ENOTDIR
	}
	if err != nil {
		return fmt.Errorf("--parent-path %s: %s: %w", o.ParentPath, p, err)
	}
	return nil
}

func (o *Options) pageServer() (string, int32, error) {
	host, port, err := net.SplitHostPort(o.PageServer)
	if err != nil || host == "" {
		return "", 0, fmt.Errorf("--page-server %q: not ADDRESS:PORT", o.PageServer)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("--page-server %q: port %q is not 1-65535", o.PageServer, port)
	}
	return host, int32(n), nil
}

// emptyNs is CRIU's empty_ns mask: the network namespace always (husk,
// like runc, does not manage network devices: a netns is either given by
// path, and external, or made empty), plus what --empty-ns names.
func (o *Options) emptyNs() uint32 {
	return unix.CLONE_NEWNET
}

// RPC is the part of CRIU's options common to a dump and a restore, with
// the image and work directories given as husk's open descriptors (CRIU
// opens them through /proc/PID/fd of its caller).
func (o *Options) RPC(images, work *os.File, logFile string, annotations map[string]string) *rpc.CriuOpts {
	mode := cgroupModes[o.ManageCgroups]
	opts := &rpc.CriuOpts{
		ImagesDirFd:       proto.Int32(int32(images.Fd())),
		LogLevel:          proto.Int32(4),
		LogFile:           proto.String(logFile),
		ManageCgroups:     proto.Bool(true),
		ManageCgroupsMode: &mode,
		ShellJob:          proto.Bool(o.ShellJob),
		TcpEstablished:    proto.Bool(o.TCPEstablished),
		ExtUnixSk:         proto.Bool(o.ExtUnixSk),
		FileLocks:         proto.Bool(o.FileLocks),
		EmptyNs:           proto.Uint32(o.emptyNs()),
		OrphanPtsMaster:   proto.Bool(true),
		AutoDedup:         proto.Bool(o.AutoDedup),
		LazyPages:         proto.Bool(o.LazyPages),
	}
	if work != nil {
		opts.WorkDirFd = proto.Int32(int32(work.Fd()))
	}
	if file, ok := annotations[ConfigAnnotation]; !ok {
		opts.ConfigFile = proto.String(DefaultConfigFile)
	} else if file != "" {
		opts.ConfigFile = proto.String(file)
	}
	return opts
}

// DumpRPC adds a dump's own options to opts.
func (o *Options) DumpRPC(opts *rpc.CriuOpts) {
	opts.LeaveRunning = proto.Bool(o.LeaveRunning)
	opts.TcpSkipInFlight = proto.Bool(o.TCPSkipInFlight)
	opts.LinkRemap = proto.Bool(o.LinkRemap)
	if o.ParentPath != "" {
		opts.ParentImg = proto.String(o.ParentPath)
		opts.TrackMem = proto.Bool(true)
	}
	if o.PageServer != "" {
		host, port, _ := o.pageServer()
		opts.Ps = &rpc.CriuPageServerInfo{Address: proto.String(host), Port: proto.Int32(port)}
	}
}

// RestoreRPC adds a restore's own options to opts.
func (o *Options) RestoreRPC(opts *rpc.CriuOpts) {
	opts.RstSibling = proto.Bool(true)
	opts.EvasiveDevices = proto.Bool(true)
	if o.LsmProfile != "" {
		opts.LsmProfile = proto.String(o.LsmProfile)
	}
	if o.LsmMountContext != "" {
		opts.LsmMountContext = proto.String(o.LsmMountContext)
	}
}

// LogErrors is the lines of CRIU's log that say Error, with the line
// before each, for the user (at most max of them).
func LogErrors(path string, max int) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	var prev string
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() && len(out) < max {
		line := s.Text()
		if bytes.Contains([]byte(line), []byte("Error")) {
			if prev != "" && len(out) == 0 {
				out = append(out, prev)
			}
			out = append(out, line)
		}
		prev = line
	}
	return out
}
