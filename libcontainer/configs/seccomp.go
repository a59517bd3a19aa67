package configs

// Seccomp is linux.seccomp, checked by specconv. The parent compiles it to
// a BPF program (package seccomp) and stores that in Program; init only
// loads Program, as late as it can before execve.
//
// Actions, operators, architectures and flags keep their config.json
// names ("SCMP_ACT_ERRNO", "SCMP_CMP_EQ", "SCMP_ARCH_X86_64",
// "SECCOMP_FILTER_FLAG_LOG").
type Seccomp struct {
	DefaultAction   string `json:"default_action"`
	DefaultErrnoRet *uint  `json:"default_errno_ret,omitempty"`
	// Architectures are added to the native one.
	Architectures []string `json:"architectures,omitempty"`
	Flags         []string `json:"flags,omitempty"`
	// ListenerPath is the unix socket that receives the notify fd and the
	// container process state when a rule's action is SCMP_ACT_NOTIFY.
	ListenerPath     string     `json:"listener_path,omitempty"`
	ListenerMetadata string     `json:"listener_metadata,omitempty"`
	Syscalls         []*Syscall `json:"syscalls,omitempty"`

	// Program is the compiled filter; nil until the parent compiles it.
	Program *SeccompProgram `json:"program,omitempty"`
}

// Syscall is one rule: the action for these names when the args match.
type Syscall struct {
	Names    []string      `json:"names"`
	Action   string        `json:"action"`
	ErrnoRet *uint         `json:"errno_ret,omitempty"`
	Args     []*SeccompArg `json:"args,omitempty"`
}

// SeccompArg compares argument Index of the syscall with Value (and
// ValueTwo for SCMP_CMP_MASKED_EQ: (arg & Value) == ValueTwo).
type SeccompArg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"value_two,omitempty"`
	Op       string `json:"op"`
}

// SeccompProgram is what init hands to seccomp(2).
type SeccompProgram struct {
	// Filter is the struct sock_filter array, in native byte order.
	Filter []byte `json:"filter"`
	// Flags are SECCOMP_FILTER_FLAG_* bits; NEW_LISTENER is among them
	// when a rule notifies.
	Flags uint `json:"flags,omitempty"`
}

// ActNotify is the action that hands a syscall to the listener.
const ActNotify = "SCMP_ACT_NOTIFY"

// UsesNotify reports whether any rule hands syscalls to a listener.
func (s *Seccomp) UsesNotify() bool {
	if s.DefaultAction == ActNotify {
		return true
	}
	for _, sc := range s.Syscalls {
		if sc.Action == ActNotify {
			return true
		}
	}
	return false
}
