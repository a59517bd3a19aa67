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

	"golang.org/x/sys/unix"
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
var cgroupModes = map[string]CgMode{
	"":       CgSoft,
	"soft":   CgSoft,
	"full":   CgFull,
	"strict": CgStrict,
	"ignore": CgIgnore,
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
func (o *Options) RPC(images, work *os.File, logFile string, annotations map[string]string) *Opts {
	mode := cgroupModes[o.ManageCgroups]
	opts := &Opts{
		ImagesDirFd:       int32(images.Fd()),
		LogLevel:          Int32(4),
		LogFile:           String(logFile),
		ManageCgroups:     Bool(true),
		ManageCgroupsMode: &mode,
		ShellJob:          Bool(o.ShellJob),
		TcpEstablished:    Bool(o.TCPEstablished),
		ExtUnixSk:         Bool(o.ExtUnixSk),
		FileLocks:         Bool(o.FileLocks),
		EmptyNs:           Uint32(o.emptyNs()),
		OrphanPtsMaster:   Bool(true),
		AutoDedup:         Bool(o.AutoDedup),
		LazyPages:         Bool(o.LazyPages),
	}
	if work != nil {
		opts.WorkDirFd = Int32(int32(work.Fd()))
	}
	if file, ok := annotations[ConfigAnnotation]; !ok {
		opts.ConfigFile = String(DefaultConfigFile)
	} else if file != "" {
		opts.ConfigFile = String(file)
	}
	return opts
}

// DumpRPC adds a dump's own options to opts.
func (o *Options) DumpRPC(opts *Opts) {
	opts.LeaveRunning = Bool(o.LeaveRunning)
	opts.TcpSkipInFlight = Bool(o.TCPSkipInFlight)
	opts.LinkRemap = Bool(o.LinkRemap)
	if o.ParentPath != "" {
		opts.ParentImg = String(o.ParentPath)
		opts.TrackMem = Bool(true)
	}
	if o.PageServer != "" {
		host, port, _ := o.pageServer()
		opts.Ps = &PageServerInfo{Address: String(host), Port: Int32(port)}
	}
}

// RestoreRPC adds a restore's own options to opts.
func (o *Options) RestoreRPC(opts *Opts) {
	opts.RstSibling = Bool(true)
	opts.EvasiveDevices = Bool(true)
	if o.LsmProfile != "" {
		opts.LsmProfile = String(o.LsmProfile)
	}
	if o.LsmMountContext != "" {
		opts.LsmMountContext = String(o.LsmMountContext)
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
