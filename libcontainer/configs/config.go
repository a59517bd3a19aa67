// Package configs is husk's internal container configuration: everything
// `husk init` needs to build the container, produced from config.json by
// specconv, sent to init as JSON, and checked by Validate.
//
// Error convention (all of husk): an error says what, where and why, naming
// the config.json field and the offending value, e.g.
//
//	config.json: linux.namespaces[2].type: unknown "netwrk"
//
// and wraps the cause with %w so callers can still test it with errors.Is.
package configs

import "os"

// NamespaceType is a namespace kind, named as in config.json.
type NamespaceType string

const (
	NEWNS     NamespaceType = "mount"
	NEWUTS    NamespaceType = "uts"
	NEWIPC    NamespaceType = "ipc"
	NEWPID    NamespaceType = "pid"
	NEWNET    NamespaceType = "network"
	NEWUSER   NamespaceType = "user"
	NEWCGROUP NamespaceType = "cgroup"
	NEWTIME   NamespaceType = "time"
)

// Namespace is one namespace of the container: new when Path is empty,
// joined by setns on Path otherwise.
type Namespace struct {
	Type NamespaceType `json:"type"`
	Path string        `json:"path,omitempty"`
}

// IDMap is one line of a user namespace uid_map or gid_map.
type IDMap struct {
	ContainerID uint32 `json:"container_id"`
	HostID      uint32 `json:"host_id"`
	Size        uint32 `json:"size"`
}

// Mount is one entry of config.json's mounts, with its options parsed.
type Mount struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Device      string `json:"device"` // filesystem type; "bind" for bind mounts
	// Flags are MS_* flags to set; ClearedFlags are MS_* flags an option
	// explicitly turned off (e.g. "rw", "dev"), kept so a bind remount can
	// tell "not asked" from "asked off".
	Flags        int    `json:"flags,omitempty"`
	ClearedFlags int    `json:"cleared_flags,omitempty"`
	Data         string `json:"data,omitempty"`
	// PropagationFlags are MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE
	// (possibly with MS_REC), applied one after the other after the mount.
	PropagationFlags []int `json:"propagation_flags,omitempty"`
	// RecAttrSet and RecAttrClr are MOUNT_ATTR_* bits set and cleared with
	// mount_setattr(AT_RECURSIVE) on the mount and all its submounts (the
	// "rro", "rnosuid", ... options).
	RecAttrSet uint64 `json:"rec_attr_set,omitempty"`
	RecAttrClr uint64 `json:"rec_attr_clr,omitempty"`
	// CopyUp (tmpcopyup) fills a tmpfs with a copy of what the image has
	// at its destination.
	CopyUp bool `json:"copy_up,omitempty"`
	// IDMap is an idmapped bind ("idmap", or uidMappings/gidMappings):
	// nil when the mount is not idmapped.
	IDMap *MountIDMap `json:"idmap,omitempty"`
}

// MountIDMap is how an idmapped mount maps the ids of its source: with
// these mappings, or, when they are empty, with the container's user
// namespace's. Recursive ("ridmap") maps the submounts of an rbind too.
type MountIDMap struct {
	UIDMappings []IDMap `json:"uid_mappings,omitempty"`
	GIDMappings []IDMap `json:"gid_mappings,omitempty"`
	Recursive   bool    `json:"recursive,omitempty"`
}

// SourceOutside reports whether the parent must open bind mount m's
// source for init: from outside the container's user namespace, which
// cannot reach what its mapped root cannot, and always for an idmapped
// mount, which only the host's root can make.
func (c *Config) SourceOutside(m *Mount) bool {
	if !m.IsBind() {
		return false
	}
	if c.RootlessEUID {
		// The runtime's own credentials reach no more than the container's
		// mapped user does, and it cannot enter init's mount namespace.
		return false
	}
	_, userns := c.Namespace(NEWUSER)
	return userns || m.IDMap != nil
}

// IsBind reports whether the mount is a bind mount.
func (m *Mount) IsBind() bool { return m.Flags&msBind != 0 }

const msBind = 0x1000 // MS_BIND; kept here so configs needs no syscall import

// Device is a device node to create in the container's /dev.
type Device struct {
	Type     rune        `json:"type"` // 'c', 'b' or 'p'
	Path     string      `json:"path"` // absolute, inside the container
	Major    int64       `json:"major"`
	Minor    int64       `json:"minor"`
	FileMode os.FileMode `json:"file_mode"` // permission bits only
	UID      uint32      `json:"uid"`
	GID      uint32      `json:"gid"`
}

// Rlimit is one process resource limit; Type is an RLIMIT_* number.
type Rlimit struct {
	Type int    `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

// Capabilities are the five capability sets, as "CAP_*" names.
type Capabilities struct {
	Bounding    []string `json:"bounding,omitempty"`
	Effective   []string `json:"effective,omitempty"`
	Inheritable []string `json:"inheritable,omitempty"`
	Permitted   []string `json:"permitted,omitempty"`
	Ambient     []string `json:"ambient,omitempty"`
}

// User is the identity the container process runs as.
type User struct {
	UID            uint32   `json:"uid"`
	GID            uint32   `json:"gid"`
	AdditionalGids []uint32 `json:"additional_gids,omitempty"`
	Umask          *uint32  `json:"umask,omitempty"`
}

// Process is what init finally execs.
type Process struct {
	Args            []string      `json:"args"`
	Env             []string      `json:"env,omitempty"`
	Cwd             string        `json:"cwd"`
	User            User          `json:"user"`
	Capabilities    *Capabilities `json:"capabilities,omitempty"`
	NoNewPrivileges bool          `json:"no_new_privileges,omitempty"`
	Rlimits         []Rlimit      `json:"rlimits,omitempty"`
	OomScoreAdj     *int          `json:"oom_score_adj,omitempty"`
	Terminal        bool          `json:"terminal,omitempty"`
	// ConsoleSize is the pty's size (process.consoleSize); nil: the
	// kernel's default.
	ConsoleSize *ConsoleSize `json:"console_size,omitempty"`
	// ConsoleSocket, with Terminal, is the absolute path of the unix
	// socket (--console-socket) that receives the pty master. The parent
	// connects to it and passes the connection to init.
	ConsoleSocket string `json:"console_socket,omitempty"`

	Scheduler   *Scheduler   `json:"scheduler,omitempty"`
	IOPriority  *IOPriority  `json:"io_priority,omitempty"`
	CPUAffinity *CPUAffinity `json:"cpu_affinity,omitempty"`
	// AppArmorProfile is process.apparmorProfile, applied at exec.
	AppArmorProfile string `json:"apparmor_profile,omitempty"`
	// SelinuxLabel is process.selinuxLabel, applied at exec.
	SelinuxLabel string `json:"selinux_label,omitempty"`
}

// ConsoleSize is a terminal's size in characters.
type ConsoleSize struct {
	Height uint16 `json:"height"`
	Width  uint16 `json:"width"`
}

// Config is the whole container as husk init builds it.
type Config struct {
	OCIVersion string `json:"oci_version"`
	// Rootfs is the absolute host path of the root filesystem.
	Rootfs     string `json:"rootfs"`
	Readonlyfs bool   `json:"readonlyfs,omitempty"`
	// RootPropagation is the MS_* propagation of the container's mount
	// namespace root (rootfsPropagation); 0 means MS_SLAVE|MS_REC.
	RootPropagation int  `json:"root_propagation,omitempty"`
	NoPivotRoot     bool `json:"no_pivot_root,omitempty"`
	// RootlessEUID says the runtime runs without root: mount sources are
	// then opened by init itself (see SourceOutside).
	RootlessEUID bool `json:"rootless_euid,omitempty"`

	Namespaces  []Namespace `json:"namespaces,omitempty"`
	UIDMappings []IDMap     `json:"uid_mappings,omitempty"`
	GIDMappings []IDMap     `json:"gid_mappings,omitempty"`

	Mounts        []*Mount  `json:"mounts,omitempty"`
	Devices       []*Device `json:"devices,omitempty"`
	MaskPaths     []string  `json:"mask_paths,omitempty"`
	ReadonlyPaths []string  `json:"readonly_paths,omitempty"`

	Hostname   string            `json:"hostname,omitempty"`
	Domainname string            `json:"domainname,omitempty"`
	Sysctl     map[string]string `json:"sysctl,omitempty"`
	// TimensOffsets is written to /proc/self/timens_offsets of a new time
	// namespace ("monotonic S NS\nboottime S NS\n").
	TimensOffsets string `json:"timens_offsets,omitempty"`

	Process *Process `json:"process"`

	NoNewKeyring bool              `json:"no_new_keyring,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`

	// ID and Bundle name the container in the state that hooks and the
	// seccomp listener receive from inside it.
	ID     string `json:"id,omitempty"`
	Bundle string `json:"bundle,omitempty"`
	Hooks  Hooks  `json:"hooks,omitempty"`
	// Seccomp is linux.seccomp; nil: no filter.
	Seccomp *Seccomp `json:"seccomp,omitempty"`

	Personality  *Personality  `json:"personality,omitempty"`
	MemoryPolicy *MemoryPolicy `json:"memory_policy,omitempty"`
	// NetDevices maps a host network device name to how it appears in the
	// container (linux.netDevices).
	NetDevices map[string]NetDevice `json:"net_devices,omitempty"`
	// MountLabel and IntelRdt are refused by Validate (lsm.go) until husk
	// applies them; they are kept so the refusal can name them.
	MountLabel string    `json:"mount_label,omitempty"`
	IntelRdt   *IntelRdt `json:"intel_rdt,omitempty"`

	// Cgroup is linux.cgroupsPath and linux.resources; nil: the defaults.
	Cgroup *Cgroup `json:"cgroup,omitempty"`
}

// Namespace returns the config's namespace of type t, if it has one.
func (c *Config) Namespace(t NamespaceType) (Namespace, bool) {
	for _, ns := range c.Namespaces {
		if ns.Type == t {
			return ns, true
		}
	}
	return Namespace{}, false
}

// NewNamespace reports whether the container gets a new namespace of type t.
func (c *Config) NewNamespace(t NamespaceType) bool {
	ns, ok := c.Namespace(t)
	return ok && ns.Path == ""
}
