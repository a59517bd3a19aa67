package nsenter

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/caps"
)

// enc is m encoded.
func enc(t *testing.T, m *bootstrap.Message) []byte {
	t.Helper()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sleepPlan is the process the tests' inits exec: sleep, as root with
// the capabilities of our bounding set.
func sleepPlan(t *testing.T) []byte {
	t.Helper()
	last, err := caps.LastCap()
	if err != nil {
		t.Fatal(err)
	}
	var all uint64
	for _, line := range strings.Split(readProc(t, os.Getpid(), "status"), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:\t"); ok {
			all, _ = strconv.ParseUint(v, 16, 64)
		}
	}
	return encode(t, &bootstrap.Plan{
		Args: []string{"sleep", "1000"}, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/", Umask: 0o22,
		Caps: bootstrap.PlanCaps{Bounding: all, Effective: all, Permitted: all, LastCap: uint32(last)},
	})
}

func TestParseRoundTrip(t *testing.T) {
	for _, m := range []bootstrap.Message{
		{},
		{CloneFlags: unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWPID},
		{
			CloneFlags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWTIME | unix.CLONE_NEWCGROUP,
			NsPaths:     []string{"user:/proc/1/ns/user", "net:/var/run/netns/a:b", "ipc:/x"},
			UIDMap:      "0 1000 1\n1 100000 65536\n",
			GIDMap:      "0 1000 1",
			OomScoreAdj: "-999",
			TimeOffsets: "monotonic 86400 0\nboottime 1 2",
		},
		{NsPaths: []string{"mnt:/m", "uts:/u", "pid:/p", "cgroup:/c", "time:/t"}},
		{OomScoreAdj: "1"}, // payload length not a multiple of 4: padded
		{CgroupTasks: []uint32{3, 7, 12}},
		{Affinity: []uint64{0x5, 0, 1 << 63}},
	} {
		got, err := ParseBootstrap(enc(t, &m))
		if err != nil {
			t.Errorf("%+v: %v", m, err)
			continue
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, m)
		}
	}
}

// message builds a bootstrap message by hand from raw attributes.
func message(attrs ...*nl.RtAttr) []byte {
	req := nl.NewNetlinkRequest(bootstrap.MsgType, 0)
	for _, a := range attrs {
		req.AddData(a)
	}
	return req.Serialize()
}

// A field past a netlink attribute's 16-bit length is refused by name,
// never wrapped.
func TestEncodeRefusesWhatWouldWrap(t *testing.T) {
	for _, c := range []struct {
		m    bootstrap.Message
		want string
	}{
		{bootstrap.Message{UIDMap: strings.Repeat("0 0 1\n", 12000)}, "linux.uidMappings: 72000 bytes in the bootstrap message, over the 65531"},
		{bootstrap.Message{NsPaths: []string{"net:/" + strings.Repeat("a", 65530)}}, "linux.namespaces: the paths: 65535 bytes"},
	} {
		if _, err := c.m.Encode(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if _, err := (&bootstrap.Message{GIDMap: strings.Repeat("x", bootstrap.AttrMax)}).Encode(); err != nil {
		t.Errorf("exactly the limit: %v", err)
	}
}

func TestParseTrailingNUL(t *testing.T) {
	b := message(
		nl.NewRtAttr(bootstrap.AttrNsPaths, []byte("net:/a,uts:/b\x00")),
		nl.NewRtAttr(bootstrap.AttrOomScoreAdj, []byte("12\x00")),
	)
	got, err := ParseBootstrap(b)
	if err != nil {
		t.Fatal(err)
	}
	want := bootstrap.Message{NsPaths: []string{"net:/a", "uts:/b"}, OomScoreAdj: "12"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestParseMalformed(t *testing.T) {
	good := enc(t, &bootstrap.Message{CloneFlags: unix.CLONE_NEWNS, UIDMap: "0 0 1"})
	patch := func(off int, v uint16) []byte {
		b := bytes.Clone(good)
		binary.NativeEndian.PutUint16(b[off:], v)
		return b
	}
	str := func(typ int, s string) *nl.RtAttr { return nl.NewRtAttr(typ, []byte(s)) }
	flags := nl.NewRtAttr(bootstrap.AttrCloneFlags, nl.Uint32Attr(0))
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "shorter than its 16-byte header"},
		{"truncated header", good[:10], "shorter than its 16-byte header"},
		{"wrong type", patch(4, 1234), "message type 1234, want 62000"},
		{"truncated message", good[:len(good)-4], "header says"},
		{"attribute past the end", patch(16, 200), "length 200 runs past the end"},
		{"attribute shorter than its header", patch(16, 2), "length 2 runs past the end"},
		{"unknown attribute", message(flags, str(999, "x")), "unknown attribute type 999"},
		{"clone flags size", message(nl.NewRtAttr(bootstrap.AttrCloneFlags, []byte{1, 2})), "CLONE_FLAGS: 2 bytes, want 4"},
		{"clone flags twice", message(flags, flags), "CLONE_FLAGS appears twice"},
		{"unknown clone flag", message(nl.NewRtAttr(bootstrap.AttrCloneFlags, nl.Uint32Attr(unix.CLONE_FS))), "unknown bits 0x200"},
		{"string twice", message(str(bootstrap.AttrUIDMap, "a"), str(bootstrap.AttrUIDMap, "b")), "UIDMAP appears twice"},
		{"NUL inside", message(str(bootstrap.AttrGIDMap, "0 0\x001")), "GIDMAP: NUL byte inside"},
		{"unknown namespace", message(str(bootstrap.AttrNsPaths, "user:/u,netwrk:/n")), `unknown namespace "netwrk" in "netwrk:/n"`},
		{"no colon", message(str(bootstrap.AttrNsPaths, "net")), `entry "net" is not name:path`},
		{"empty path", message(str(bootstrap.AttrNsPaths, "net:")), `entry "net:" is not name:path`},
		{"empty entry", message(str(bootstrap.AttrNsPaths, "net:/a,,uts:/b")), `entry "" is not name:path`},
		{"cgroup tasks size", message(nl.NewRtAttr(bootstrap.AttrCgroupTasks, []byte{5, 0, 0})), "CGROUP_TASKS: 3 bytes, want 4 per fd"},
		{"cgroup tasks empty", message(nl.NewRtAttr(bootstrap.AttrCgroupTasks, nil)), "CGROUP_TASKS: 0 bytes"},
		{"cgroup tasks stdio", message(nl.NewRtAttr(bootstrap.AttrCgroupTasks, nl.Uint32Attr(2))), "CGROUP_TASKS: fd 2 out of range"},
		{"cgroup tasks too many", message(nl.NewRtAttr(bootstrap.AttrCgroupTasks, make([]byte, 4*33))), "1 to 32 fds"},
		{"cgroup tasks twice", message(nl.NewRtAttr(bootstrap.AttrCgroupTasks, nl.Uint32Attr(5)), nl.NewRtAttr(bootstrap.AttrCgroupTasks, nl.Uint32Attr(6))), "CGROUP_TASKS appears twice"},
		{"too many paths", message(str(bootstrap.AttrNsPaths, strings.Repeat("net:/a,", 16)+"net:/a")), "more than 16 entries"},
		{"affinity size", message(nl.NewRtAttr(bootstrap.AttrAffinity, make([]byte, 12))), "AFFINITY: 12 bytes"},
		{"affinity twice", message(nl.NewRtAttr(bootstrap.AttrAffinity, make([]byte, 8)), nl.NewRtAttr(bootstrap.AttrAffinity, make([]byte, 8))), "AFFINITY appears twice"},
	} {
		_, err := ParseBootstrap(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// A truncated attribute header needs a header length that covers it.
	b := append(message(flags), 1, 0, 0, 0)
	binary.NativeEndian.PutUint32(b, uint32(len(b)-2))
	if _, err := ParseBootstrap(b); err == nil || !strings.Contains(err.Error(), "truncated attribute header at offset 24") {
		t.Errorf("truncated attribute header: got %v", err)
	}
}

// FuzzParseBootstrap: the bootstrap message's parser (parse.c) against
// random input. Whatever it accepts, each field it yields is a byte-exact
// copy of its own attribute's payload, as the netlink package's own
// attribute walker (written apart) splits the message; and any message
// made from the input encodes and parses back to itself.
func FuzzParseBootstrap(f *testing.F) {
	f.Add(enc(&testing.T{}, &bootstrap.Message{CloneFlags: unix.CLONE_NEWNS, NsPaths: []string{"net:/a"}, UIDMap: "0 0 1",
		CgroupTasks: []uint32{5}, Affinity: []uint64{3}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := ParseBootstrap(b); err == nil {
			checkAgainstAttrs(t, b, m)
		}
		m := messageFrom(b)
		back, err := ParseBootstrap(enc(t, &m))
		if err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", back, m)
		}
	})
}

// ---- process tests: re-execute this binary as `husk init` ----

var subreaper sync.Once

// initProc is a re-executed test binary speaking the init protocol.
type initProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	sock   *os.File
	stderr *os.File // a file, not a pipe: Go init keeps it open
	pid    int      // the forked Go init, once known
}

// startInit runs the test binary with the init socket on fd 3 (and
// extra on 4, 5, …) and writes msg to it. Cleanup reaps the first process
// and the forked one.
func startInit(t *testing.T, msg []byte, extra ...*os.File) *initProc {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("namespaces need root")
	}
	// Orphaned Go inits are reparented to us, so we can reap them.
	subreaper.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
		}
	})
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil { // for deadlines
		t.Fatal(err)
	}
	p := &initProc{t: t, sock: os.NewFile(uintptr(fds[0]), "parent")}
	child := os.NewFile(uintptr(fds[1]), "child")
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), bootstrap.EnvInitPipe+"=3")
	p.cmd.ExtraFiles = append([]*os.File{child}, extra...)
	if p.stderr, err = os.CreateTemp(t.TempDir(), "stderr"); err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.stderr
	err = p.cmd.Start()
	child.Close()
	if err != nil {
		p.sock.Close()
		t.Fatal(err)
	}
	t.Cleanup(p.reap)
	if msg != nil && os.Getenv(bootstrap.EnvInitType) != bootstrap.InitTypeExec {
		// A container's pid 1 gets its process right after the message.
		msg = append(bytes.Clone(msg), frame(t, bootstrap.SyncPlan, sleepPlan(t))...)
	}
	if _, err := p.sock.Write(msg); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *initProc) reap() {
	p.sock.Close() // nsexec or fakeInit sees EOF and exits
	_ = p.cmd.Wait()
	if p.pid > 0 {
		_ = unix.Kill(p.pid, unix.SIGKILL)
		_, _ = unix.Wait4(p.pid, nil, 0, nil)
		p.pid = 0
	}
	p.stderr.Close()
}

// stderrText is what the processes wrote to stderr so far.
func (p *initProc) stderrText() string {
	b, _ := os.ReadFile(p.stderr.Name())
	return string(b)
}

// recv reads one frame and fails unless it has type want (nsexec's HELLO,
// first, is skipped).
func (p *initProc) recv(want bootstrap.SyncType) []byte {
	p.t.Helper()
	_ = p.sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, payload, err := bootstrap.Recv(p.sock)
	if err == nil && typ == bootstrap.SyncHello && want != bootstrap.SyncHello {
		typ, payload, err = bootstrap.Recv(p.sock)
	}
	if err != nil {
		p.t.Fatalf("waiting for %s: %v (stderr: %q)", want, err, p.stderrText())
	}
	if typ != want {
		p.t.Fatalf("got %s %q, want %s", typ, payload, want)
	}
	return payload
}

func (p *initProc) recvPid(want bootstrap.SyncType) int {
	p.t.Helper()
	pid, err := bootstrap.ParsePid(p.recv(want))
	if err != nil {
		p.t.Fatal(err)
	}
	return pid
}

func (p *initProc) send(typ bootstrap.SyncType, payload []byte) {
	p.t.Helper()
	if err := bootstrap.Send(p.sock, typ, payload); err != nil {
		p.t.Fatal(err)
	}
}

// finish takes the init's pid, sends it CONFIG (a chroot into "/" with
// nothing to mount: what a container without a mount namespace of its
// own gets), waits for the launcher's READY (it then execs sleep) and
// returns the init's pid and its pid as its pid namespace sees it.
func (p *initProc) finish() (hostPid, innerPid int) {
	p.t.Helper()
	p.pid = p.recvPid(bootstrap.SyncPid)
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("nsexec's first process: %v (stderr: %q)", err, p.stderrText())
	}
	plan, err := (&bootstrap.MountPlan{Root: "/"}).Encode()
	if err != nil {
		p.t.Fatal(err)
	}
	config, err := (&bootstrap.Rootfs{Flags: bootstrap.RootfsChroot, Chroot: "/", Mounts: plan}).Encode()
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(bootstrap.SyncConfig, config)
	p.recv(bootstrap.SyncReady)
	return p.pid, nsPid(p.t, p.pid)
}

// nsPid is pid as its own pid namespace sees it (the last of NSpid).
func nsPid(t *testing.T, pid int) int {
	t.Helper()
	for _, line := range strings.Split(readProc(t, pid, "status"), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(v)
			n, err := strconv.Atoi(f[len(f)-1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no NSpid", pid)
	return 0
}

// fail expects an ERROR frame containing want and exit status 1.
func (p *initProc) fail(want string) {
	p.t.Helper()
	if msg := string(p.recv(bootstrap.SyncError)); !strings.Contains(msg, want) {
		p.t.Errorf("error %q does not contain %q", msg, want)
	}
	if err := p.cmd.Wait(); err == nil || p.cmd.ProcessState.ExitCode() != 1 {
		p.t.Errorf("exit: %v, want status 1", err)
	}
}

func nsLink(t *testing.T, pid int, ns string) string {
	t.Helper()
	s, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readProc(t *testing.T, pid int, file string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUnshareAndJoin(t *testing.T) {
	self := os.Getpid()
	a := startInit(t, enc(t, &bootstrap.Message{CloneFlags: unix.CLONE_NEWUTS | unix.CLONE_NEWPID}))
	pidA, inner := a.finish()
	if inner != 1 {
		t.Errorf("pid 1's pid in its new PID namespace: %d, want 1", inner)
	}
	for _, ns := range []string{"uts", "pid"} {
		if nsLink(t, pidA, ns) == nsLink(t, self, ns) {
			t.Errorf("pid 1 shares our %s namespace", ns)
		}
	}

	// B joins A's uts namespace and (by path) our net namespace.
	b := startInit(t, enc(t, &bootstrap.Message{NsPaths: []string{
		"uts:/proc/" + strconv.Itoa(pidA) + "/ns/uts",
		"net:/proc/" + strconv.Itoa(self) + "/ns/net",
	}}))
	pidB, _ := b.finish()
	if nsLink(t, pidB, "uts") != nsLink(t, pidA, "uts") {
		t.Error("B did not join A's uts namespace")
	}
	if nsLink(t, pidB, "net") != nsLink(t, self, "net") {
		t.Error("B is not in our net namespace")
	}
}

func TestUserNamespace(t *testing.T) {
	p := startInit(t, enc(t, &bootstrap.Message{CloneFlags: unix.CLONE_NEWUSER | unix.CLONE_NEWUTS}))
	pid := p.recvPid(bootstrap.SyncUsermapPls)
	for _, f := range []string{"uid_map", "gid_map"} {
		if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/"+f, []byte("0 100000 65536"), 0); err != nil {
			t.Fatal(err)
		}
	}
	p.send(bootstrap.SyncUsermapAck, nil)
	goInit, _ := p.finish() // pid 1
	status := readProc(t, goInit, "status")
	for _, want := range []string{"Uid:\t100000\t100000\t100000\t100000", "Gid:\t100000\t100000\t100000\t100000"} {
		if !strings.Contains(status, want) {
			t.Errorf("status of pid 1 lacks %q:\n%s", want, status)
		}
	}
	if nsLink(t, goInit, "user") == nsLink(t, os.Getpid(), "user") {
		t.Error("pid 1 shares our user namespace")
	}
}

func TestTimeNamespaceAndOom(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/time"); err != nil {
		t.Skip("no time namespaces:", err)
	}
	p := startInit(t, enc(t, &bootstrap.Message{
		CloneFlags:  unix.CLONE_NEWTIME,
		TimeOffsets: "monotonic 86400 0",
		OomScoreAdj: "123",
	}))
	pid, _ := p.finish()
	if got := strings.Fields(readProc(t, pid, "timens_offsets")); !reflect.DeepEqual(got[:3], []string{"monotonic", "86400", "0"}) {
		t.Errorf("timens_offsets: %q", got)
	}
	if got := strings.TrimSpace(readProc(t, pid, "oom_score_adj")); got != "123" {
		t.Errorf("oom_score_adj: %q, want 123", got)
	}
}

func TestErrors(t *testing.T) {
	startInit(t, enc(t, &bootstrap.Message{NsPaths: []string{"net:/nonexistent/netns/x"}})).
		fail("nsexec: open net:/nonexistent/netns/x: No such file or directory")
	startInit(t, enc(t, &bootstrap.Message{NsPaths: []string{"net:/proc/self/ns/uts"}})).
		fail("nsexec: setns net:/proc/self/ns/uts: Invalid argument")
	startInit(t, message(nl.NewRtAttr(999, nil))).
		fail("nsexec: bootstrap message: unknown attribute type 999")
	startInit(t, enc(t, &bootstrap.Message{OomScoreAdj: "lots"})).
		fail(`nsexec: write OOM_SCORE_ADJ "lots" to /proc/self/oom_score_adj: Invalid argument`)
	u := startInit(t, enc(t, &bootstrap.Message{CloneFlags: unix.CLONE_NEWUSER}))
	u.recv(bootstrap.SyncUsermapPls)
	u.send(bootstrap.SyncPid, bootstrap.PidPayload(1))
	u.fail("nsexec: waiting for USERMAP_ACK: got sync frame type 3 with 4 bytes")

	// A bad fd number in the environment.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), bootstrap.EnvInitPipe+"=x")
	out, err := cmd.CombinedOutput()
	if want := `nsexec: _HUSK_INITPIPE="x": not an fd number`; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("bad fd: exit %v, output %q, want %q", err, out, want)
	}

	// The parent hangs up before sending the message (before or after
	// nsexec's HELLO): said on stderr.
	p := startInit(t, nil)
	p.sock.Close()
	if err := p.cmd.Wait(); err == nil || !strings.Contains(p.stderrText(), "nsexec: read bootstrap message header: ") &&
		!strings.Contains(p.stderrText(), "nsexec: send HELLO: Broken pipe") {
		t.Errorf("exit %v, stderr %q", err, p.stderrText())
	}
}

// TestJoinCgroupTasks: nsexec writes itself into the v1 tasks files it
// is given, first thing, so the process it forks starts there; a file it
// cannot write fails naming it.
func TestJoinCgroupTasks(t *testing.T) {
	root := "/sys/fs/cgroup/pids"
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	if _, err := os.Stat(root + "/tasks"); err != nil {
		t.Skip("no cgroup v1 pids hierarchy at", root, "(pure cgroup v2 host):", err)
	}
	dir, err := os.MkdirTemp(root, "husk-nsenter-test-")
	if err != nil {
		t.Fatal(err)
	}
	// A cleanup, not a defer: it runs after the reaps startInit registers
	// (cleanups run last first), so a failed test leaves no cgroup either.
	t.Cleanup(func() { _ = unix.Rmdir(dir) })
	tasks, err := os.OpenFile(dir+"/tasks", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tasks.Close()
	p := startInit(t, enc(t, &bootstrap.Message{CgroupTasks: []uint32{4}}), tasks)
	pid, _ := p.finish()
	if got, want := readProc(t, pid, "cgroup"), ":pids:/"+strings.TrimPrefix(dir, root+"/")+"\n"; !strings.Contains(got, want) {
		t.Errorf("pid 1's /proc/PID/cgroup lacks %q:\n%s", want, got)
	}
	p.reap() // empty the cgroup for Rmdir

	ro, err := os.Open(dir + "/tasks")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	startInit(t, enc(t, &bootstrap.Message{CgroupTasks: []uint32{4}}), ro).
		fail(`nsexec: join cgroup: write "0" to ` + dir + `/tasks (fd 4): Bad file descriptor`)
}

// TestManyInARow starts many pid 1s in a row, each in new namespaces,
// each reaching READY.
func TestManyInARow(t *testing.T) {
	n := 50
	if testing.Short() {
		n = 5
	}
	flags := uint32(unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWPID | unix.CLONE_NEWNET)
	for i := 0; i < n; i++ {
		p := startInit(t, enc(t, &bootstrap.Message{CloneFlags: flags}))
		if _, inner := p.finish(); inner != 1 {
			t.Fatalf("run %d: pid %d, want 1", i, inner)
		}
		p.reap()
	}
}

// TestDebugLinesOnlyWithLogDebug: nsexec writes its debug lines to the log
// pipe only when the parent logs them (EnvLogDebug, from --debug).
func TestDebugLinesOnlyWithLogDebug(t *testing.T) {
	for _, debug := range []bool{false, true} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(bootstrap.EnvLogPipe, "4")
		if debug {
			t.Setenv(bootstrap.EnvLogDebug, "1")
		}
		p := startInit(t, enc(t, &bootstrap.Message{CloneFlags: unix.CLONE_NEWUTS}), w)
		w.Close()
		p.finish()
		p.reap()
		out, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(string(out), `{"level":"debug","msg":"nsexec: made uts namespaces"}`)
		if got != debug {
			t.Errorf("with %s=%v: log pipe %q", bootstrap.EnvLogDebug, debug, out)
		}
	}
}

// frame is one sync frame, as the parent writes it.
func frame(t *testing.T, typ bootstrap.SyncType, payload []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := bootstrap.Send(&b, typ, payload); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// execMessage is what the parent sends an exec's nsexec: the bootstrap
// message, the PLAN, and GO (the binary's view is sealed).
func execMessage(t *testing.T, plan *bootstrap.Plan) []byte {
	b := append(enc(t, &bootstrap.Message{}), frame(t, bootstrap.SyncPlan, encode(t, plan))...)
	return append(b, frame(t, bootstrap.SyncGo, nil)...)
}

// TestLaunchExec runs an exec's launch through nsexec (the re-executed
// test binary, no namespaces): the launcher sets the process up as the
// plan says, forks it and lets it exec; PID, then READY once it has. A
// failure is an ERROR naming the field, and leaves no process.
func TestLaunchExec(t *testing.T) {
	t.Setenv(bootstrap.EnvInitType, bootstrap.InitTypeExec)
	last, err := caps.LastCap()
	if err != nil {
		t.Fatal(err)
	}
	script := `echo "$A $HOME $(id -u):$(id -g) $(umask) $(pwd)" >&2; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status >&2`
	plan := &bootstrap.Plan{
		Args: []string{"sh", "-c", script}, Env: []string{"A=1", "PATH=/nope:/usr/bin:/bin", "HOME="}, FillHome: true,
		Cwd: "/tmp", UID: 65534, GID: 65534, Umask: 0o077, NoNewPrivs: true,
		Caps: bootstrap.PlanCaps{Bounding: 1 << 5, LastCap: uint32(last)},
	}
	p := startInit(t, execMessage(t, plan))
	p.pid = p.recvPid(bootstrap.SyncPid)
	p.recv(bootstrap.SyncReady)
	_ = p.cmd.Wait() // the launcher: then the process is ours to reap
	var ws unix.WaitStatus
	if _, err := unix.Wait4(p.pid, &ws, 0, nil); err != nil || ws.ExitStatus() != 0 {
		t.Fatalf("the process: %v, status %v (stderr %q)", err, ws, p.stderrText())
	}
	p.pid = 0
	out := p.stderrText()
	home := "/" // of uid 65534, from the host's /etc/passwd (no mount namespace here)
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Split(line, ":"); len(f) >= 6 && f[2] == "65534" && f[5] != "" {
				home = f[5]
				break
			}
		}
	}
	for _, want := range []string{"1 " + home + " 65534:65534 0077 /tmp\n", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000020", "NoNewPrivs:\t1"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the process's output %q", want, out)
		}
	}

	// Refused before the fork: no PID, the launcher's words.
	plan.Args = []string{"no-such-binary"}
	p = startInit(t, execMessage(t, plan))
	p.fail(`exec: "no-such-binary": executable file not found in $PATH`)
	plan.Args, plan.Cwd = []string{"true"}, "/no/such/dir"
	p = startInit(t, execMessage(t, plan))
	p.fail(`process.cwd: chdir "/no/such/dir": no such file or directory`)

	// The LSM labels, where the kernel has no LSM to take them (EINVAL):
	// the keyring's label is written first, just before the join; the
	// exec labels after; each error names the field, the value, the file.
	if _, err := os.Stat("/proc/self/attr/keycreate"); err == nil && !hostHasLSM() {
		plan.Args, plan.Cwd = []string{"true"}, "/"
		for _, tc := range []struct {
			keyring         bool
			apparmor, label string
			want            string
		}{
			{true, "", "u:r:t:s0", `process.selinuxLabel "u:r:t:s0": write /proc/self/attr/keycreate: invalid argument`},
			{false, "", "u:r:t:s0", `process.selinuxLabel "u:r:t:s0": write /proc/self/attr/exec: invalid argument`},
			{false, "husk-p", "", `process.apparmorProfile "husk-p": write /proc/self/attr/exec: invalid argument`},
		} {
			plan.Keyring, plan.AppArmor, plan.SELinux = tc.keyring, tc.apparmor, tc.label
			p = startInit(t, execMessage(t, plan))
			p.fail(tc.want)
		}
		plan.Keyring, plan.AppArmor, plan.SELinux = false, "", ""
	}

	// SCHED_DEADLINE, which cannot fork: the launcher forks first, and the
	// forked process sets it while it still has the privileges, before
	// the credentials, as runc: a user without CAP_SYS_NICE gets it.
	plan.Cwd = "/"
	plan.Sched = &bootstrap.PlanSched{Policy: 6, Runtime: 1e6, Deadline: 1e7, Period: 1e7}
	plan.Args = []string{"sh", "-c", "exec 1>&2; exec grep -E '^policy ' /proc/self/sched"}
	p = startInit(t, execMessage(t, plan))
	p.pid = p.recvPid(bootstrap.SyncPid)
	p.recv(bootstrap.SyncReady)
	_ = p.cmd.Wait()
	if _, err := unix.Wait4(p.pid, &ws, 0, nil); err != nil || ws.ExitStatus() != 0 {
		t.Fatalf("SCHED_DEADLINE as uid 65534: %v, status %v (stderr %q)", err, ws, p.stderrText())
	}
	p.pid = 0
	if out := p.stderrText(); !strings.HasPrefix(out, "policy") || !strings.HasSuffix(strings.TrimSpace(out), " 6") {
		t.Errorf("SCHED_DEADLINE: the process's policy: %q, want 6", out)
	}

	// Refused after the fork (a runtime over the deadline): PID, then
	// ERROR, and the process is gone.
	plan.Sched = &bootstrap.PlanSched{Policy: 6, Runtime: 2e7, Deadline: 1e7, Period: 1e7}
	p = startInit(t, execMessage(t, plan))
	p.pid = p.recvPid(bootstrap.SyncPid)
	if msg := string(p.recv(bootstrap.SyncError)); !strings.HasPrefix(msg, "process.scheduler: sched_setattr(policy 6") {
		t.Errorf("error %q", msg)
	}
	_ = p.cmd.Wait() // the launcher: then the process is ours to reap
	if _, err := unix.Wait4(p.pid, &ws, 0, nil); err != nil || ws.ExitStatus() != 127 {
		t.Errorf("the forked process: %v, status %v, want exit 127", err, ws)
	}
	p.pid = 0
}

// hostHasLSM reports whether the kernel runs a major LSM (AppArmor or
// SELinux), which would take the labels the tests expect refused.
func hostHasLSM() bool {
	b, _ := os.ReadFile("/sys/kernel/security/lsm")
	return strings.Contains(string(b), "apparmor") || strings.Contains(string(b), "selinux")
}
