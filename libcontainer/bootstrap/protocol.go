// Package bootstrap is the whole contract between husk's parent process
// (create, run, exec: package libcontainer) and `husk init` (nsexec.c and
// the launcher in nsenter): what init
// inherits, the messages on the init socketpair, and exec.fifo. The
// numbers live in bootstrap.h, shared with nsenter; Go reads them through
// cgo.
//
// What init inherits (fds.go): the parent passes these files to the
// `husk init` it starts, in this order, and names them in the environment:
//
//	fd          env variable       what                          used by
//	0-2                            the process's stdio           the process
//	3 ..                           --preserve-fds, LISTEN_FDS    the process
//	first       EnvInitPipe        init socketpair (below)       nsexec, launcher
//	first+1     EnvLogPipe         JSON log lines to the parent  all of them
//	first+2     EnvFifoFd          exec.fifo, O_PATH (create)    the launcher (pid 1)
//	next        EnvConsoleFd       --console-socket, connected   the launcher
//	next        EnvListenerFd      seccomp listener, connected   the launcher
//	            EnvInitType        InitTypeExec for an exec      nsexec
//
// first is FirstFd(number of preserved fds); InitEnv writes the variables.
//
// The conversation on the init socketpair, in order:
//
//	step  sender        message             answer / meaning
//	0     nsexec        HELLO               first thing: its image is mapped
//	1     parent        bootstrap (netlink) nsexec writes itself into the v1
//	                                        cgroups' tasks files it names (inherited
//	                                        fds), sets the initial CPU affinity,
//	                                        then joins and unshares namespaces
//	1p    parent        PLAN                right after it: the process (its
//	                                        listener's message with holes for
//	                                        its pid, which the launcher fills)
//	1h    parent        (on HELLO)          makes the husk binary's view
//	                                        non-executable (no exec of the
//	                                        binary is legitimate after this);
//	1g    parent        GO (exec)           then tells the launcher: it lets the
//	                                        process it forks exec only after GO
//	2     nsexec        USERMAP_PLS(pid)    only with a new user namespace:
//	                                        parent writes uid_map/gid_map, then
//	3     parent        USERMAP_ACK         nsexec becomes root in the new userns
//	4     nsexec        PID(pid)            create: the forked container's init
//	                                        (pid 1 in its pid namespace), the
//	                                        launcher; nsexec's first process exits.
//	                                        exec: the process the launcher set up
//	                                        and forked; then READY once it is about
//	                                        to execve, or ERROR
//	5l    parent        (the limits)        without RootfsAskHooks: the parent
//	                                        applies the cgroup limits now
//	5     parent        CONFIG(Rootfs)      how pid 1 builds the container
//	                                        (rootfs.go: the mount plan, the
//	                                        createContainer hooks, flags), decided
//	                                        from pid 1's cgroups and mount table;
//	                                        its flags say whether it stops at 5a
//	5m    pid 1         MOUNT_SOURCE(u32 N) before it mounts bind mounts[N] in a user
//	                                        namespace, or an idmapped one: the
//	                                        parent opens the source in pid 1's
//	                                        mount namespace, with the host's
//	                                        credentials (launch/mountsource.go)
//	5n    parent        MOUNT_FD            the source's fd (SCM_RIGHTS, no
//	                                        payload), or the error as text
//	5a    pid 1         CREATE_HOOKS        (RootfsAskHooks only: the parent has
//	                                        prestart or createRuntime hooks, or
//	                                        a pids limit) rootfs mounted, not
//	                                        pivoted; the parent applies the
//	                                        cgroup limits now, runs
//	                                        prestart/createRuntime hooks (a
//	                                        failure: it kills init). A READY
//	                                        without it is a protocol error
//	5b    parent        CREATE_HOOKS_DONE   pid 1 runs createContainer, pivots
//	6     launcher      READY               pid 1 set the process up, waits on
//	                                        exec.fifo; the parent records state
//
//	any   nsexec, launcher
//	                    ERROR(text)         the failure, shown to the user; the
//	                                        sender exits non-zero
//
// A closed socket before READY means init died; the parent reports that,
// naming seccomp when the launcher died of SIGSYS after loading the
// filter.
//
// Every format has lengths that cannot wrap, and a limit:
//
//	format              lengths            limit
//	sync frame          u32 type, u32 len  64 MiB: Send refuses more, Recv
//	                                       too; the C reader takes each frame
//	                                       type's own bound (PLAN: PlanMax)
//	bootstrap message   u32 nlmsg_len,     BootstrapMax (1 MiB) in all;
//	                    u16 per attribute  AttrMax (65531 bytes) per attribute:
//	                                       Message.Encode refuses a field past
//	                                       it by name (the config's own checks
//	                                       keep every one far below: at most 8
//	                                       paths of PATH_MAX, 340 id map lines)
//	PLAN payload        u32 type, u32 len  PlanMax (16 MiB) in all; the launch
//	                    per record         package refuses, naming the field,
//	                                       what execve or the kernel would not
//	                                       take: args and env over a quarter of
//	                                       the stack rlimit (2 MiB by default,
//	                                       6 MiB at most) or a string over
//	                                       MAX_ARG_STRLEN (128 KiB), more than
//	                                       65536 groups, a filter over 4096
//	                                       instructions, a listener message over
//	                                       4 MiB, a cwd or label over a page
//	exec.fifo           one write          FifoMsgMax (4000 bytes)
//
// exec.fifo (fds.go), after READY, for a container's init only:
//
//	7     launcher      opens it to write   blocks until `husk start` opens it
//	                                        to read (start has run the
//	                                        startContainer hooks by then)
//	8     launcher      FifoGo              in one write; it execs the process
//	9     launcher      why execve failed   only if it did, in one write
//	                                        (`start` logs it to --log; the
//	                                        process's stderr has it too)
package bootstrap

// #include "bootstrap.h"
import "C"

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/vishvananda/netlink/nl"
)

// Netlink message and attribute numbers (bootstrap.h).
const (
	MsgType           = C.HUSK_BOOTSTRAP_MSG
	AttrCloneFlags    = C.HUSK_ATTR_CLONE_FLAGS
	AttrNsPaths       = C.HUSK_ATTR_NS_PATHS
	AttrUIDMap        = C.HUSK_ATTR_UIDMAP
	AttrGIDMap        = C.HUSK_ATTR_GIDMAP
	AttrOomScoreAdj   = C.HUSK_ATTR_OOM_SCORE_ADJ
	AttrTimensOffsets = C.HUSK_ATTR_TIMENS_OFFSETS
	AttrCgroupTasks   = C.HUSK_ATTR_CGROUP_TASKS
	AttrAffinity      = C.HUSK_ATTR_AFFINITY

	// AttrMax bounds an attribute's payload: its length is 16 bits.
	AttrMax = C.HUSK_ATTR_MAX
	// BootstrapMax bounds the whole message.
	BootstrapMax = C.HUSK_BOOTSTRAP_MAX
)

// SyncType is the type of a sync frame.
type SyncType uint32

// Sync frame types (bootstrap.h); see the table above.
const (
	SyncUsermapPls SyncType = C.HUSK_SYNC_USERMAP_PLS
	SyncUsermapAck SyncType = C.HUSK_SYNC_USERMAP_ACK
	SyncPid        SyncType = C.HUSK_SYNC_PID
	SyncError      SyncType = C.HUSK_SYNC_ERROR
	SyncConfig     SyncType = C.HUSK_SYNC_CONFIG
	SyncReady      SyncType = C.HUSK_SYNC_READY

	SyncCreateHooks     SyncType = C.HUSK_SYNC_CREATE_HOOKS
	SyncCreateHooksDone SyncType = C.HUSK_SYNC_CREATE_HOOKS_DONE

	SyncMountSource SyncType = C.HUSK_SYNC_MOUNT_SOURCE
	SyncMountFd     SyncType = C.HUSK_SYNC_MOUNT_FD
	SyncHello       SyncType = C.HUSK_SYNC_HELLO
	SyncGo          SyncType = C.HUSK_SYNC_GO
)

func (t SyncType) String() string {
	switch t {
	case SyncUsermapPls:
		return "USERMAP_PLS"
	case SyncUsermapAck:
		return "USERMAP_ACK"
	case SyncPid:
		return "PID"
	case SyncError:
		return "ERROR"
	case SyncConfig:
		return "CONFIG"
	case SyncReady:
		return "READY"
	case SyncCreateHooks:
		return "CREATE_HOOKS"
	case SyncCreateHooksDone:
		return "CREATE_HOOKS_DONE"
	case SyncMountSource:
		return "MOUNT_SOURCE"
	case SyncMountFd:
		return "MOUNT_FD"
	case SyncPlan:
		return "PLAN"
	case SyncHello:
		return "HELLO"
	case SyncGo:
		return "GO"
	}
	return fmt.Sprintf("sync(%d)", uint32(t))
}

// Message is the bootstrap message: what nsexec needs before Go starts.
type Message struct {
	CloneFlags uint32
	// NsPaths are "procname:path" (procname as under /proc/PID/ns), in
	// join order: user first.
	NsPaths     []string
	UIDMap      string
	GIDMap      string
	OomScoreAdj string
	TimeOffsets string
	// CgroupTasks are init's fd numbers of cgroup v1 `tasks` files, open
	// for writing: nsexec's first step writes "0" (itself) to each and
	// closes it (libcontainer/cgroup: Entry).
	CgroupTasks []uint32
	// Affinity is process.execCPUAffinity.initial as a CPU mask, nil for
	// none: nsexec sets it (after every CPU) once in the cgroups.
	Affinity []uint64
}

// Encode serialises m as one netlink message. A netlink attribute's
// length has 16 bits: a field that does not fit is refused by name
// rather than wrapped (the config's checks keep every one far below).
func (m *Message) Encode() ([]byte, error) {
	req := nl.NewNetlinkRequest(MsgType, 0)
	req.AddData(nl.NewRtAttr(AttrCloneFlags, nl.Uint32Attr(m.CloneFlags)))
	fds := make([]byte, 0, 4*len(m.CgroupTasks))
	for _, fd := range m.CgroupTasks {
		fds = binary.NativeEndian.AppendUint32(fds, fd)
	}
	var mask []byte
	for _, w := range m.Affinity {
		mask = binary.NativeEndian.AppendUint64(mask, w)
	}
	for _, a := range []struct {
		typ   int
		field string
		v     []byte
	}{
		{AttrNsPaths, "linux.namespaces: the paths", []byte(strings.Join(m.NsPaths, ","))},
		{AttrUIDMap, "linux.uidMappings", []byte(m.UIDMap)},
		{AttrGIDMap, "linux.gidMappings", []byte(m.GIDMap)},
		{AttrOomScoreAdj, "process.oomScoreAdj", []byte(m.OomScoreAdj)},
		{AttrTimensOffsets, "linux.timeOffsets", []byte(m.TimeOffsets)},
		{AttrCgroupTasks, "the cgroup v1 tasks files", fds},
		{AttrAffinity, "process.execCPUAffinity.initial", mask},
	} {
		if len(a.v) > AttrMax {
			return nil, fmt.Errorf("%s: %d bytes in the bootstrap message, over the %d a netlink attribute holds", a.field, len(a.v), AttrMax)
		}
		if len(a.v) > 0 {
			req.AddData(nl.NewRtAttr(a.typ, a.v))
		}
	}
	b := req.Serialize()
	if len(b) > BootstrapMax {
		return nil, fmt.Errorf("the bootstrap message is %d bytes, over its %d-byte limit", len(b), BootstrapMax)
	}
	return b, nil
}

// maxPayload bounds a sync frame so a corrupt header cannot make the
// reader allocate without limit.
const maxPayload = 64 << 20

// Send writes one sync frame; a payload past maxPayload, which no reader
// would take (and whose length could wrap), is refused.
func Send(w io.Writer, t SyncType, payload []byte) error {
	if len(payload) > maxPayload {
		return fmt.Errorf("send %s: a payload of %d bytes, over the %d a sync frame carries", t, len(payload), maxPayload)
	}
	buf := make([]byte, 8+len(payload))
	binary.NativeEndian.PutUint32(buf[0:4], uint32(t))
	binary.NativeEndian.PutUint32(buf[4:8], uint32(len(payload)))
	copy(buf[8:], payload)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("send %s: %w", t, err)
	}
	return nil
}

// Recv reads one sync frame. io.EOF means the peer closed the socket
// between frames.
func Recv(r io.Reader) (SyncType, []byte, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	t := SyncType(binary.NativeEndian.Uint32(hdr[0:4]))
	n := binary.NativeEndian.Uint32(hdr[4:8])
	if n > maxPayload {
		return 0, nil, fmt.Errorf("sync frame %s: payload of %d bytes is too large", t, n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, fmt.Errorf("read %s payload: %w", t, io.ErrUnexpectedEOF)
	}
	return t, payload, nil
}

// PidPayload encodes a pid for SyncPid / SyncUsermapPls.
func PidPayload(pid int) []byte {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, uint32(pid))
	return b
}

// ParsePid decodes the payload of SyncPid / SyncUsermapPls.
func ParsePid(p []byte) (int, error) {
	if len(p) != 4 {
		return 0, fmt.Errorf("pid payload of %d bytes, want 4", len(p))
	}
	return int(binary.NativeEndian.Uint32(p)), nil
}
