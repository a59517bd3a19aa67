// Package bootstrap is the whole contract between husk's parent process
// (create, run, exec: package libcontainer) and `husk init` (nsexec.c,
// then package initproc): what init inherits, the messages on the init
// socketpair, and exec.fifo. The numbers live in bootstrap.h, shared with
// nsenter/nsexec.c; Go reads them through cgo.
//
// What init inherits (fds.go): the parent passes these files to the
// `husk init` it starts, in this order, and names them in the environment:
//
//	fd          env variable       what                          used by
//	0-2                            the process's stdio           the process
//	3 ..                           --preserve-fds, LISTEN_FDS    the process
//	first       EnvInitPipe        init socketpair (below)       nsexec, Go init
//	first+1     EnvLogPipe         JSON log lines to the parent  Go init
//	first+2     EnvFifoFd          exec.fifo, O_PATH (create)    Go init
//	next        EnvConsoleFd       --console-socket, connected   Go init
//	next        EnvListenerFd      seccomp listener, connected   Go init
//	            EnvInitType        InitTypeExec for an exec      nsexec, Go init
//
// first is FirstFd(number of preserved fds); InitEnv writes the variables.
//
// The conversation on the init socketpair, in order (protocol.go):
//
//	step  sender        message             answer / meaning
//	1     parent        bootstrap (netlink) nsexec writes itself into the v1
//	                                        cgroups' tasks files it names (inherited
//	                                        fds), then joins and unshares namespaces
//	2     nsexec        USERMAP_PLS(pid)    only with a new user namespace:
//	                                        parent writes uid_map/gid_map, then
//	3     parent        USERMAP_ACK         nsexec becomes root in the new userns
//	4     nsexec        PID(pid)            the forked process that runs Go init;
//	                                        nsexec's first process exits
//	5     parent        CONFIG(json)        Go init builds the container
//	5a    Go init       CREATE_HOOKS        (create, with prestart or createRuntime
//	                                        hooks or a pids limit only: see
//	                                        configs.AsksCreateHooks) rootfs mounted, not
//	                                        pivoted; the parent applies the cgroup
//	                                        limits, runs prestart/createRuntime
//	                                        hooks (a failure: it kills init).
//	                                        Otherwise the parent applies the
//	                                        limits before step 5
//	5b    parent        CREATE_HOOKS_DONE   init runs createContainer, pivots
//	5m    Go init       MOUNT_SOURCE(u32 N) before it mounts bind mounts[N] in a user
//	                                        namespace, or an idmapped one: the
//	                                        parent opens the source in init's
//	                                        mount namespace, with the host's
//	                                        credentials (mountsource.go)
//	5n    parent        MOUNT_FD            the source's fd (SCM_RIGHTS, no
//	                                        payload), or the error as text
//	6     Go init       READY               waits on exec.fifo; parent records state
//	                                        (exec: no hooks, no rootfs, no fifo)
//	6x    parent        EXEC_GO             exec only: the parent has moved init
//	                                        into the container's cgroups (Go
//	                                        init runs outside them, so a pids
//	                                        limit cannot starve its threads);
//	                                        init execs the process
//
// An exec with a plan (execplan.go, in the bootstrap message) skips steps
// 5-6x: after PID, nsexec's forked child sets the process up in C and
// sends READY (or ERROR) itself, then execs it; it enters the
// container's cgroups itself at step 1 (born in the v2 directory, or
// writing itself into the v1 tasks files), as it never starts Go.
//
//	any   nsexec/init   ERROR(text)         the failure, shown to the user; the
//	                                        sender exits non-zero
//
// A closed socket before READY means init died; the parent reports that.
// A sync frame is two native-endian u32 (type, payload length) and the
// payload, at most 64 MiB.
//
// exec.fifo (fds.go), after READY, for a container's init only:
//
//	7     Go init       opens it to write   blocks until `husk start` opens it
//	                                        to read
//	8     Go init       FifoGo, or text     in one write of at most FifoMsgMax
//	                                        bytes: it execs the process, or why
//	                                        not (a startContainer hook failed)
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
	case SyncExecGo:
		return "EXEC_GO"
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
	// Plan, for an exec, is the process nsexec sets up and execs itself
	// (execplan.go); nil: the Go init does it from a CONFIG.
	Plan *ExecPlan
}

// Encode serialises m as one netlink message.
func (m *Message) Encode() []byte {
	req := nl.NewNetlinkRequest(MsgType, 0)
	req.AddData(nl.NewRtAttr(AttrCloneFlags, nl.Uint32Attr(m.CloneFlags)))
	for _, a := range []struct {
		typ int
		v   string
	}{
		{AttrNsPaths, strings.Join(m.NsPaths, ",")},
		{AttrUIDMap, m.UIDMap},
		{AttrGIDMap, m.GIDMap},
		{AttrOomScoreAdj, m.OomScoreAdj},
		{AttrTimensOffsets, m.TimeOffsets},
	} {
		if a.v != "" {
			req.AddData(nl.NewRtAttr(a.typ, []byte(a.v)))
		}
	}
	if len(m.CgroupTasks) > 0 {
		fds := make([]byte, 0, 4*len(m.CgroupTasks))
		for _, fd := range m.CgroupTasks {
			fds = binary.NativeEndian.AppendUint32(fds, fd)
		}
		req.AddData(nl.NewRtAttr(AttrCgroupTasks, fds))
	}
	if m.Plan != nil {
		req.AddData(m.Plan.attr())
	}
	return req.Serialize()
}

// maxPayload bounds a sync frame so a corrupt header cannot make the
// reader allocate without limit.
const maxPayload = 64 << 20

// Send writes one sync frame.
func Send(w io.Writer, t SyncType, payload []byte) error {
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
