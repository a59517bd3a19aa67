package criu

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/checkpoint-restore/go-criu/v7/rpc"
	"google.golang.org/protobuf/proto"
)

// viaGoCriu is mine as go-criu's protobuf types read it: the request husk
// sends, decoded by the generated code CRIU's own protocol comes from.
func viaGoCriu(t *testing.T, mine *Opts) *rpc.CriuOpts {
	t.Helper()
	var req rpc.CriuReq
	if err := proto.Unmarshal((&Req{Type: ReqDump, Opts: mine}).Marshal(), &req); err != nil {
		t.Fatalf("go-criu cannot read husk's request: %v", err)
	}
	if req.GetType() != rpc.CriuReqType_DUMP {
		t.Fatalf("type %v", req.GetType())
	}
	return req.GetOpts()
}

// Every field husk can set reaches go-criu's types with its value, and
// an unset one stays unset; the encoding is the same bytes go-criu's
// marshalling gives (field order included).
func TestOptsAsGoCriuReadsThem(t *testing.T) {
	mode := CgStrict
	mine := &Opts{
		ImagesDirFd: 5, Pid: Int32(1234), LeaveRunning: Bool(true), ExtUnixSk: Bool(false),
		TcpEstablished: Bool(true), EvasiveDevices: Bool(true), ShellJob: Bool(false), FileLocks: Bool(true),
		LogLevel: Int32(4), LogFile: String("dump.log"),
		Ps:            &PageServerInfo{Address: String("10.0.0.1"), Port: Int32(27)},
		NotifyScripts: Bool(true), Root: String("/r/oot"), ParentImg: String("../pre"), TrackMem: Bool(true),
		AutoDedup: Bool(false), WorkDirFd: Int32(6), LinkRemap: Bool(true),
		ExtMnt:            []ExtMountMap{{"/data", "/data"}, {"/dev/fuse", "/dev/fuse"}},
		ManageCgroups:     Bool(true),
		CgRoot:            []CgroupRoot{{"cpu", "/husk/c1"}, {"", "/husk/c1"}},
		RstSibling:        Bool(true),
		InheritFd:         []InheritFd{{"extRootNetNS", 4}, {"pipe:[12]", 0}},
		ManageCgroupsMode: &mode,
		External:          []string{"net[4026531992]:extRootNetNS"},
		EmptyNs:           Uint32(0x40000000),
		JoinNs:            []JoinNamespace{{"net", "/run/netns/x"}},
		FreezeCgroup:      String("/sys/fs/cgroup/freezer/c1"),
		TcpSkipInFlight:   Bool(true), LazyPages: Bool(false), OrphanPtsMaster: Bool(true),
		ConfigFile: String("/etc/criu/runc.conf"), LsmProfile: String("apparmor:p"),
		LsmMountContext: String("system_u:object_r:container_file_t:s0"),
	}
	got := viaGoCriu(t, mine)
	want := &rpc.CriuOpts{
		ImagesDirFd: proto.Int32(5), Pid: proto.Int32(1234), LeaveRunning: proto.Bool(true), ExtUnixSk: proto.Bool(false),
		TcpEstablished: proto.Bool(true), EvasiveDevices: proto.Bool(true), ShellJob: proto.Bool(false), FileLocks: proto.Bool(true),
		LogLevel: proto.Int32(4), LogFile: proto.String("dump.log"),
		Ps:            &rpc.CriuPageServerInfo{Address: proto.String("10.0.0.1"), Port: proto.Int32(27)},
		NotifyScripts: proto.Bool(true), Root: proto.String("/r/oot"), ParentImg: proto.String("../pre"), TrackMem: proto.Bool(true),
		AutoDedup: proto.Bool(false), WorkDirFd: proto.Int32(6), LinkRemap: proto.Bool(true),
		ExtMnt: []*rpc.ExtMountMap{{Key: proto.String("/data"), Val: proto.String("/data")},
			{Key: proto.String("/dev/fuse"), Val: proto.String("/dev/fuse")}},
		ManageCgroups: proto.Bool(true),
		CgRoot: []*rpc.CgroupRoot{{Ctrl: proto.String("cpu"), Path: proto.String("/husk/c1")},
			{Ctrl: proto.String(""), Path: proto.String("/husk/c1")}},
		RstSibling: proto.Bool(true),
		InheritFd: []*rpc.InheritFd{{Key: proto.String("extRootNetNS"), Fd: proto.Int32(4)},
			{Key: proto.String("pipe:[12]"), Fd: proto.Int32(0)}},
		ManageCgroupsMode: rpc.CriuCgMode_STRICT.Enum(),
		External:          []string{"net[4026531992]:extRootNetNS"},
		EmptyNs:           proto.Uint32(0x40000000),
		JoinNs:            []*rpc.JoinNamespace{{Ns: proto.String("net"), NsFile: proto.String("/run/netns/x")}},
		FreezeCgroup:      proto.String("/sys/fs/cgroup/freezer/c1"),
		TcpSkipInFlight:   proto.Bool(true), LazyPages: proto.Bool(false), OrphanPtsMaster: proto.Bool(true),
		ConfigFile: proto.String("/etc/criu/runc.conf"), LsmProfile: proto.String("apparmor:p"),
		LsmMountContext: proto.String("system_u:object_r:container_file_t:s0"),
	}
	if !proto.Equal(got, want) {
		t.Errorf("go-criu read\n%v\nwant\n%v", got, want)
	}
	theirs, err := proto.MarshalOptions{Deterministic: true}.Marshal(&rpc.CriuReq{Type: rpc.CriuReqType_DUMP.Enum(), Opts: want})
	if err != nil {
		t.Fatal(err)
	}
	if ours := (&Req{Type: ReqDump, Opts: mine}).Marshal(); !bytes.Equal(ours, theirs) {
		t.Errorf("husk's bytes\n%x\ngo-criu's\n%x", ours, theirs)
	}

	// Nothing set but the required fd: nothing else on the wire. A
	// negative fd is proto's ten-byte int32.
	min := viaGoCriu(t, &Opts{ImagesDirFd: -1})
	if !proto.Equal(min, &rpc.CriuOpts{ImagesDirFd: proto.Int32(-1)}) {
		t.Errorf("minimal options: %v", min)
	}
	// Cgroup mode IGNORE is 0: set, it is still sent.
	ignore := CgIgnore
	if m := viaGoCriu(t, &Opts{ManageCgroupsMode: &ignore}); m.ManageCgroupsMode == nil || *m.ManageCgroupsMode != rpc.CriuCgMode_IGNORE {
		t.Errorf("mode IGNORE: %v", m)
	}
}

// The acknowledgement of a notification, as go-criu reads it.
func TestNotifyAckAsGoCriuReadsIt(t *testing.T) {
	for _, ok := range []bool{true, false} {
		var req rpc.CriuReq
		if err := proto.Unmarshal((&Req{Type: ReqNotify, NotifySuccess: Bool(ok)}).Marshal(), &req); err != nil {
			t.Fatal(err)
		}
		if req.GetType() != rpc.CriuReqType_NOTIFY || req.NotifySuccess == nil || req.GetNotifySuccess() != ok || req.Opts != nil {
			t.Errorf("ack %v: %v", ok, &req)
		}
	}
}

// Answers written by go-criu's types (CRIU's protocol) read back the same,
// fields husk does not know (a newer CRIU's) skipped.
func TestRespFromGoCriu(t *testing.T) {
	for _, tc := range []struct {
		in   *rpc.CriuResp
		want Resp
	}{
		{&rpc.CriuResp{Type: rpc.CriuReqType_DUMP.Enum(), Success: proto.Bool(true),
			Dump: &rpc.CriuDumpResp{Restored: proto.Bool(false)}},
			Resp{Type: ReqDump, Success: true}},
		{&rpc.CriuResp{Type: rpc.CriuReqType_RESTORE.Enum(), Success: proto.Bool(true),
			Restore: &rpc.CriuRestoreResp{Pid: proto.Int32(4242)}},
			Resp{Type: ReqRestore, Success: true, Restored: &RestoreResp{Pid: 4242}}},
		{&rpc.CriuResp{Type: rpc.CriuReqType_NOTIFY.Enum(), Success: proto.Bool(true),
			Notify: &rpc.CriuNotify{Script: proto.String("setup-namespaces"), Pid: proto.Int32(77)}},
			Resp{Type: ReqNotify, Success: true, Notify: &NotifyMsg{Script: "setup-namespaces", Pid: 77}}},
		{&rpc.CriuResp{Type: rpc.CriuReqType_DUMP.Enum(), Success: proto.Bool(false), CrErrno: proto.Int32(-1),
			CrErrmsg: proto.String("Dumping FAILED"), Status: proto.Int32(3),
			Version:  &rpc.CriuVersion{MajorNumber: proto.Int32(3), MinorNumber: proto.Int32(17)},
			Features: &rpc.CriuFeatures{MemTrack: proto.Bool(true)},
			Ps:       &rpc.CriuPageServerInfo{Pid: proto.Int32(1), Port: proto.Int32(2)}},
			Resp{Type: ReqDump, CrErrno: -1, CrErrmsg: "Dumping FAILED"}},
	} {
		data, err := proto.Marshal(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalResp(data)
		if err != nil {
			t.Errorf("%v: %v", tc.in, err)
			continue
		}
		if got.Type != tc.want.Type || got.Success != tc.want.Success || got.CrErrno != tc.want.CrErrno ||
			got.CrErrmsg != tc.want.CrErrmsg || (got.Restored == nil) != (tc.want.Restored == nil) ||
			(got.Notify == nil) != (tc.want.Notify == nil) ||
			(got.Restored != nil && *got.Restored != *tc.want.Restored) ||
			(got.Notify != nil && *got.Notify != *tc.want.Notify) {
			t.Errorf("%v: read %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// A hostile or broken answer is an error that says what is wrong, never
// a read past the datagram or a half-read answer taken as CRIU's.
func TestRespRefusals(t *testing.T) {
	ok := []byte{0x08, 0x01, 0x10, 0x01} // type DUMP, success true
	huge := binary.AppendUvarint([]byte{0x4a}, 1<<63)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "required field"},
		{"no success", []byte{0x08, 0x01}, "required field"},
		{"key cut", []byte{0x80}, "message ends inside a field"},
		{"varint cut", []byte{0x08}, "field 1: message ends"},
		{"varint of 11 bytes", append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 11)...), "longer than 64 bits"},
		{"varint of 65 bits", append(append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 9)...), 0x02), "longer than 64 bits"},
		{"field 0", []byte{0x00, 0x01}, "field number 0"},
		{"errmsg past the end", append(ok, 0x4a, 0x10, 'x'), "length 16, 1 bytes left"},
		{"a length that wraps", append(ok, huge...), "bytes left"},
		{"type as bytes", []byte{0x0a, 0x00, 0x10, 0x01}, "field 1: wire type 2, want 0"},
		{"group", append(ok, 0x0b), "wire type 3 not supported"},
		{"fixed32 cut", append(ok, 0x7d, 0x01), "message ends"},
		{"restore without pid", append(ok, 0x22, 0x00), "without its pid"},
		{"notify cut", append(ok, 0x2a, 0x02, 0x0a, 0x05), "length 5, 0 bytes left"},
	} {
		_, err := UnmarshalResp(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (%x): %v, want %q", tc.name, tc.in, err, tc.want)
		}
	}
	if _, err := UnmarshalResp(ok); err != nil {
		t.Errorf("a good answer refused: %v", err)
	}
}

// FuzzUnmarshalResp: husk reads any datagram without a panic, and where
// go-criu's code reads it too, both read the same fields.
func FuzzUnmarshalResp(f *testing.F) {
	for _, m := range []*rpc.CriuResp{
		{Type: rpc.CriuReqType_RESTORE.Enum(), Success: proto.Bool(true), Restore: &rpc.CriuRestoreResp{Pid: proto.Int32(9)}},
		{Type: rpc.CriuReqType_NOTIFY.Enum(), Success: proto.Bool(true), Notify: &rpc.CriuNotify{Script: proto.String("post-restore"), Pid: proto.Int32(-3)}},
		{Type: rpc.CriuReqType_DUMP.Enum(), Success: proto.Bool(false), CrErrno: proto.Int32(5), CrErrmsg: proto.String("x")},
	} {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		mine, err := UnmarshalResp(b)
		var theirs rpc.CriuResp
		if proto.Unmarshal(b, &theirs) != nil || err != nil {
			return
		}
		if int32(mine.Type) != int32(theirs.GetType()) || mine.Success != theirs.GetSuccess() ||
			mine.CrErrno != theirs.GetCrErrno() || mine.CrErrmsg != theirs.GetCrErrmsg() ||
			(theirs.Notify != nil && (mine.Notify == nil || mine.Notify.Pid != theirs.Notify.GetPid())) ||
			(theirs.Restore != nil && (mine.Restored == nil || mine.Restored.Pid != theirs.Restore.GetPid())) {
			t.Errorf("%x: husk read %+v, go-criu %v", b, mine, &theirs)
		}
	})
}
