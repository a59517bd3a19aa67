package libcontainer

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/husk-runtime/husk/libcontainer/atomicfile"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// State is what husk remembers of a container, in ROOT/ID/state.json.
// The container's status is derived, never stored (see Status).
type State struct {
	OCIVersion  string            `json:"ociVersion"`
	ID          string            `json:"id"`
	InitPid     int               `json:"init_pid"`
	InitStart   uint64            `json:"init_start"` // /proc/PID/stat starttime
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Owner       string            `json:"owner"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Config      *configs.Config   `json:"config"`
	// CgroupPaths are the container's cgroup directories (controller ->
	// path, "" for the unified hierarchy), recorded before init starts.
	CgroupPaths map[string]string `json:"cgroup_paths,omitempty"`

	// partial: Config was loaded in part (see LoadLifecycle and
	// LoadForExec); such a state is never saved.
	partial bool
}

const (
	stateFile = "state.json"
	fifoName  = "exec.fifo"
)

// checkID refuses ids that are not safe as one path element.
func checkID(id string) error {
	if id == "" {
		return fmt.Errorf("container id: must not be empty")
	}
	if !idChars(id) || id == "." || id == ".." {
		return fmt.Errorf("container id: invalid %q (letters, digits, '_', '+', '-' and '.' only)", id)
	}
	return nil
}

// idChars reports whether id is made only of ASCII letters, digits, '_',
// '+', '-' and '.' (a loop, not a regexp: a package-level regexp is
// compiled in every husk process).
func idChars(id string) bool {
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c == '_', c == '+', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// lockDir takes an exclusive flock on dir, serialising commands on one
// container. The lock is released when the returned file is closed.
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", dir, err)
	}
	return f, nil
}

// criuRootName is where a restore binds the rootfs for CRIU (restore.go).
const criuRootName = "criu-root"

// removeStateDir removes a container's state dir. A restore killed midway
// may have left the rootfs bound on DIR/criu-root: it is unmounted first,
// so that the removal never descends into the container's rootfs.
func removeStateDir(dir string) error {
	root := filepath.Join(dir, criuRootName)
	if err := unix.Unmount(root, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmount %s: %w", root, err)
	}
	return os.RemoveAll(dir)
}

// saveState writes state.json atomically: a reader sees the old or the
// new file, never half of one.
func saveState(dir string, s *State) error {
	if s.partial {
		return fmt.Errorf("internal error: state of %s loaded in part, not saved", s.ID)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, stateFile), data, 0o600)
}

// A load reads state.json whole (loadFull: update), or without what its
// command never reads (see decodePartial and decodeForExec).
type loadKind int

const (
	loadFull loadKind = iota
	loadLifecycle
	loadExec
)

func loadState(dir string, kind loadKind) (*State, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var s State
	switch kind {
	case loadLifecycle:
		err = decodePartial(data, &s)
	case loadExec:
		err = decodeForExec(data, &s)
	default:
		err = json.Unmarshal(data, &s)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return &s, nil
}

// Why a partial load: encoding/json, the first time it meets a struct
// type, builds the encoders of every type reachable from it (even to
// decode), and from configs.Config that is most of husk's types: the
// decode of state.json was about a third of the CPU of `husk state`,
// start, kill and delete. These commands read only the config's hooks,
// namespaces, network devices and the cgroup's paths and names; the
// process, mounts, devices and seccomp (exec's business) and the cgroup
// limits (update's) are skipped unread, so neither their values nor
// their types are decoded. (A damaged value in a skipped part
// is found by the next exec, not by these commands.)

// skipped is a config part a partial load does not decode.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// partialConfig is configs.Config without the parts a lifecycle command
// does not read.
type partialConfig struct {
	*configs.Config
	Process skipped        `json:"process"`
	Mounts  skipped        `json:"mounts,omitempty"`
	Devices skipped        `json:"devices,omitempty"`
	Seccomp skipped        `json:"seccomp,omitempty"`
	Cgroup  *partialCgroup `json:"cgroup,omitempty"`
}

// partialCgroup is the cgroup config without its resources: a lifecycle
// command finds the cgroups by their recorded paths and the driver's
// names (systemd unit), and never reads the limits (update does, with a
// full load).
type partialCgroup struct {
	cgroupFields
	Resources skipped `json:"resources"`
}

// cgroupFields is configs.Cgroup without its methods: embedded, the
// Cgroup's own UnmarshalJSON (configs/lazyjson.go) would decode it whole.
type cgroupFields configs.Cgroup

// partialState is State with its Config decoded as a partialConfig.
type partialState struct {
	*State
	Config *partialConfig `json:"config"`
}

func decodePartial(data []byte, s *State) error {
	p := partialState{State: s}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if p.Config != nil {
		s.Config = partialResult(p.Config.Config, p.Config.Cgroup)
	}
	s.partial = true
	return nil
}

// execPartialConfig is configs.Config without what exec never reads: the
// container's mounts, devices and hooks (create's), and the cgroup limits
// but the cpuset's CPUs (it joins the cgroups by their recorded paths). An
// exec's process, seccomp, namespaces, ids and attributes are read; and an
// exec, which changes no state, never saves it.
type execPartialConfig struct {
	*configs.Config
	Mounts  skipped     `json:"mounts,omitempty"`
	Devices skipped     `json:"devices,omitempty"`
	Hooks   skipped     `json:"hooks,omitempty"`
	Cgroup  *execCgroup `json:"cgroup,omitempty"`
}

// execCgroup is partialCgroup with the one limit an exec reads: the
// cpuset's CPUs (a scheduler the kernel refuses then gets runc's words).
type execCgroup struct {
	cgroupFields
	Resources struct {
		CpusetCpus string `json:"cpuset_cpus"`
	} `json:"resources"`
}

// decodeForExec is decodePartial for exec (execPartialConfig).
func decodeForExec(data []byte, s *State) error {
	p := struct {
		*State
		Config *execPartialConfig `json:"config"`
	}{State: s}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if p.Config != nil {
		var cg *partialCgroup
		if c := p.Config.Cgroup; c != nil {
			cg = &partialCgroup{cgroupFields: c.cgroupFields}
			cg.cgroupFields.Resources.CpusetCpus = c.Resources.CpusetCpus
		}
		s.Config = partialResult(p.Config.Config, cg)
	}
	s.partial = true
	return nil
}

// partialResult is the config a partial decode made, with its cgroup
// settings (those a partial decode keeps).
func partialResult(cfg *configs.Config, cg *partialCgroup) *configs.Config {
	if cfg == nil { // "config": {} sets no field
		cfg = &configs.Config{}
	}
	if cg != nil {
		cfg.Cgroup = (*configs.Cgroup)(&cg.cgroupFields)
	}
	return cfg
}

// WritePidFile writes pid to path atomically, as containerd expects.
func WritePidFile(path string, pid int) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("pid file %s: %w", path, err)
	}
	return atomicfile.Write(abs, []byte(fmt.Sprint(pid)), 0o644)
}

// ownerName is the user name of the caller, as `list` shows it: from
// /etc/passwd, as runc reads it, else from the C library's user database
// (NSS: LDAP, sssd...), which costs a cgo call and nsswitch.conf.
func ownerName() string {
	uid := strconv.Itoa(os.Getuid())
	if name, ok := passwdName("/etc/passwd", uid); ok {
		return name
	}
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "#" + uid
}

// passwdName finds uid's name in a passwd file (name:x:uid:...).
func passwdName(path, uid string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 4)
		if len(f) == 4 && f[2] == uid && f[0] != "" && !strings.HasPrefix(f[0], "+") && !strings.HasPrefix(f[0], "-") {
			return f[0], true
		}
	}
	return "", false
}
