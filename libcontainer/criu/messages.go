package criu

import (
	"fmt"
	"strconv"
)

// The messages of CRIU's RPC that husk sends and reads (rpc.proto of
// CRIU 3.x, as go-criu v7 vendors it), with go-criu's field names. A
// pointer field is optional: nil is absent. Field numbers are rpc.proto's.

// ReqType is criu_req_type.
type ReqType int32

const (
	ReqEmpty        ReqType = 0
	ReqDump         ReqType = 1
	ReqRestore      ReqType = 2
	ReqCheck        ReqType = 3
	ReqPreDump      ReqType = 4
	ReqPageServer   ReqType = 5
	ReqNotify       ReqType = 6
	ReqFeatureCheck ReqType = 9
	ReqVersion      ReqType = 10
)

var reqNames = map[ReqType]string{
	ReqEmpty: "EMPTY", ReqDump: "DUMP", ReqRestore: "RESTORE", ReqCheck: "CHECK",
	ReqPreDump: "PRE_DUMP", ReqPageServer: "PAGE_SERVER", ReqNotify: "NOTIFY",
	7: "CPUINFO_DUMP", 8: "CPUINFO_CHECK", ReqFeatureCheck: "FEATURE_CHECK",
	ReqVersion: "VERSION", 11: "WAIT_PID", 12: "PAGE_SERVER_CHLD", 13: "SINGLE_PRE_DUMP",
}

// String is rpc.proto's name of t, or its number.
func (t ReqType) String() string {
	if s, ok := reqNames[t]; ok {
		return s
	}
	return strconv.Itoa(int(t))
}

// CgMode is criu_cg_mode.
type CgMode int32

const (
	CgIgnore CgMode = 0
	CgSoft   CgMode = 3
	CgFull   CgMode = 4
	CgStrict CgMode = 5
)

// Opts is criu_opts, the fields husk sets.
type Opts struct {
	ImagesDirFd       int32 // 1, required
	Pid               *int32
	LeaveRunning      *bool
	ExtUnixSk         *bool
	TcpEstablished    *bool
	EvasiveDevices    *bool
	ShellJob          *bool
	FileLocks         *bool
	LogLevel          *int32
	LogFile           *string
	Ps                *PageServerInfo
	NotifyScripts     *bool
	Root              *string
	ParentImg         *string
	TrackMem          *bool
	AutoDedup         *bool
	WorkDirFd         *int32
	LinkRemap         *bool
	ExtMnt            []ExtMountMap
	ManageCgroups     *bool
	CgRoot            []CgroupRoot
	RstSibling        *bool
	InheritFd         []InheritFd
	ManageCgroupsMode *CgMode
	External          []string
	EmptyNs           *uint32
	JoinNs            []JoinNamespace
	FreezeCgroup      *string
	TcpSkipInFlight   *bool
	LazyPages         *bool
	OrphanPtsMaster   *bool
	ConfigFile        *string
	LsmProfile        *string
	LsmMountContext   *string
}

// PageServerInfo is criu_page_server_info.
type PageServerInfo struct {
	Address *string
	Port    *int32
}

// ExtMountMap is ext_mount_map.
type ExtMountMap struct{ Key, Val string }

// JoinNamespace is join_namespace.
type JoinNamespace struct{ Ns, NsFile string }

// InheritFd is inherit_fd.
type InheritFd struct {
	Key string
	Fd  int32
}

// CgroupRoot is cgroup_root.
type CgroupRoot struct{ Ctrl, Path string }

// Req is criu_req.
type Req struct {
	Type          ReqType // required
	Opts          *Opts
	NotifySuccess *bool
}

// Resp is criu_resp, the fields husk reads; a newer CRIU's others are
// skipped.
type Resp struct {
	Type     ReqType
	Success  bool
	Restored *RestoreResp
	Notify   *NotifyMsg
	CrErrno  int32
	CrErrmsg string
}

// RestoreResp is criu_restore_resp.
type RestoreResp struct{ Pid int32 }

// NotifyMsg is criu_notify: the script CRIU reached, and a pid.
type NotifyMsg struct {
	Script string
	Pid    int32
}

// Bool, Int32, Uint32 and String make the optional fields' pointers.
func Bool(v bool) *bool       { return &v }
func Int32(v int32) *int32    { return &v }
func Uint32(v uint32) *uint32 { return &v }
func String(v string) *string { return &v }

// Marshal is r in the wire format.
func (r *Req) Marshal() []byte {
	var e encoder
	e.int32(1, int32(r.Type))
	if r.Opts != nil {
		e.message(2, r.Opts.encode)
	}
	opt(3, r.NotifySuccess, e.bool)
	return e.b
}

func (o *Opts) encode(e *encoder) {
	e.int32(1, o.ImagesDirFd)
	opt(2, o.Pid, e.int32)
	opt(3, o.LeaveRunning, e.bool)
	opt(4, o.ExtUnixSk, e.bool)
	opt(5, o.TcpEstablished, e.bool)
	opt(6, o.EvasiveDevices, e.bool)
	opt(7, o.ShellJob, e.bool)
	opt(8, o.FileLocks, e.bool)
	opt(9, o.LogLevel, e.int32)
	opt(10, o.LogFile, e.string)
	if ps := o.Ps; ps != nil {
		e.message(11, func(e *encoder) {
			opt(1, ps.Address, e.string)
			opt(2, ps.Port, e.int32)
		})
	}
	opt(12, o.NotifyScripts, e.bool)
	opt(13, o.Root, e.string)
	opt(14, o.ParentImg, e.string)
	opt(15, o.TrackMem, e.bool)
	opt(16, o.AutoDedup, e.bool)
	opt(17, o.WorkDirFd, e.int32)
	opt(18, o.LinkRemap, e.bool)
	for _, m := range o.ExtMnt {
		e.stringPair(23, m.Key, m.Val)
	}
	opt(24, o.ManageCgroups, e.bool)
	for _, r := range o.CgRoot {
		e.stringPair(25, r.Ctrl, r.Path)
	}
	opt(26, o.RstSibling, e.bool)
	for _, f := range o.InheritFd {
		e.message(27, func(e *encoder) {
			e.string(1, f.Key)
			e.int32(2, f.Fd)
		})
	}
	opt(34, o.ManageCgroupsMode, func(f int, m CgMode) { e.int32(f, int32(m)) })
	for _, s := range o.External {
		e.string(37, s)
	}
	opt(38, o.EmptyNs, e.uint32)
	for _, ns := range o.JoinNs {
		e.stringPair(39, ns.Ns, ns.NsFile)
	}
	opt(44, o.FreezeCgroup, e.string)
	opt(46, o.TcpSkipInFlight, e.bool)
	opt(48, o.LazyPages, e.bool)
	opt(50, o.OrphanPtsMaster, e.bool)
	opt(51, o.ConfigFile, e.string)
	opt(53, o.LsmProfile, e.string)
	opt(63, o.LsmMountContext, e.string)
}

// UnmarshalResp reads a criu_resp. A known field of the wrong wire type,
// a length past the message, or a missing required field (type,
// success; a restore answer's pid) is an error.
func UnmarshalResp(b []byte) (*Resp, error) {
	r := &Resp{}
	var hasType, hasSuccess bool
	err := eachField(b, func(f field) error {
		var err error
		switch f.num {
		case 1:
			var t int32
			t, err = f.int32()
			r.Type, hasType = ReqType(t), true
		case 2:
			r.Success, err = f.bool()
			hasSuccess = true
		case 4:
			r.Restored, err = unmarshalRestore(f)
		case 5:
			r.Notify, err = unmarshalNotify(f)
		case 7:
			r.CrErrno, err = f.int32()
		case 9:
			var s []byte
			s, err = f.bytes()
			r.CrErrmsg = string(s)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("criu_resp: %w", err)
	}
	if !hasType || !hasSuccess {
		return nil, fmt.Errorf("criu_resp: required field type (%v) or success (%v) missing", hasType, hasSuccess)
	}
	return r, nil
}

func unmarshalRestore(f field) (*RestoreResp, error) {
	r := &RestoreResp{}
	hasPid := false
	err := f.fields(func(f field) error {
		if f.num != 1 {
			return nil
		}
		var err error
		r.Pid, err = f.int32()
		hasPid = true
		return err
	})
	if err == nil && !hasPid {
		err = fmt.Errorf("field 4: criu_restore_resp without its pid")
	}
	return r, err
}

func unmarshalNotify(f field) (*NotifyMsg, error) {
	n := &NotifyMsg{}
	err := f.fields(func(f field) error {
		var err error
		switch f.num {
		case 1:
			var s []byte
			s, err = f.bytes()
			n.Script = string(s)
		case 2:
			n.Pid, err = f.int32()
		}
		return err
	})
	return n, err
}
