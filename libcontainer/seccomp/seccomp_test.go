package seccomp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/husk-runtime/husk/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the process that loads a filter: a filter
// cannot be taken off again, so it is never loaded into the test itself.
const childEnv = "HUSK_SECCOMP_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child loads the program on stdin, hands a notify fd to fd 3 when there
// is one, then makes mkdir(2) on os.Args[1] and prints its errno.
func child() int {
	runtime.LockOSThread()
	var p configs.SeccompProgram
	if err := json.NewDecoder(os.Stdin).Decode(&p); err != nil {
		fmt.Println("decode:", err)
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println("prctl:", err)
		return 2
	}
	msg, _ := ListenerMessage("meta", os.Getpid(), specs.State{ID: "c1", Status: specs.StateCreating})
	fd, err := load(&p)
	if err != nil {
		fmt.Println("load:", err)
		return 2
	}
	if fd >= 0 {
		if err := sendToListener(3, fd, msg); err != nil {
			fmt.Println(err)
			return 2
		}
	}
	path, _ := unix.BytePtrFromString(os.Args[1])
	_, _, errno := unix.Syscall(unix.SYS_MKDIR, uintptr(unsafe.Pointer(path)), 0o755, 0)
	// getpid must still work: only mkdir has a rule.
	if unix.Getpid() <= 0 {
		return 3
	}
	fmt.Printf("errno=%d\n", errno)
	return 0
}

// runChild compiles s and runs child with it, returning its output.
func runChild(t *testing.T, s *configs.Seccomp, extra *os.File) string {
	t.Helper()
	if err := Compile(s); err != nil {
		t.Fatalf("Compile: %v", err)
	}
	prog, _ := json.Marshal(s.Program)
	cmd := exec.Command(os.Args[0], t.TempDir()+"/made")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin = strings.NewReader(string(prog))
	if extra != nil {
		cmd.ExtraFiles = []*os.File{extra}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func errnoRule(names []string, ret *uint) *configs.Syscall {
	return &configs.Syscall{Names: names, Action: "SCMP_ACT_ERRNO", ErrnoRet: ret}
}

func uptr(v uint) *uint { return &v }

func TestErrnoRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		ret  *uint
		want unix.Errno
	}{
		{"default EPERM", nil, unix.EPERM},
		{"errnoRet", uptr(uint(unix.ENOSPC)), unix.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Syscalls: []*configs.Syscall{errnoRule([]string{"mkdir"}, tc.ret)}}
			if got, want := runChild(t, s, nil), fmt.Sprintf("errno=%d", tc.want); got != want {
				t.Errorf("child printed %q, want %q", got, want)
			}
		})
	}
}

// Names libseccomp does not know and syscalls this architecture lacks are
// left out; the rest of the profile still applies.
func TestUnknownAndForeignSyscalls(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the foreign syscall (socketcall) is chosen for amd64")
	}
	s := &configs.Seccomp{
		DefaultAction: "SCMP_ACT_ALLOW",
		Architectures: []string{"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"},
		Syscalls: []*configs.Syscall{
			errnoRule([]string{"no_such_syscall", "socketcall", "mkdir"}, nil),
			{Names: []string{"socketcall"}, Action: "SCMP_ACT_KILL"},
		},
	}
	if got := runChild(t, s, nil); got != fmt.Sprintf("errno=%d", unix.EPERM) {
		t.Errorf("child printed %q", got)
	}
}

// Two conditions on one argument become two rules: either may match.
func TestArgConditions(t *testing.T) {
	mode := func(op string, v uint64) *configs.SeccompArg { return &configs.SeccompArg{Index: 1, Value: v, Op: op} }
	for _, tc := range []struct {
		name string
		args []*configs.SeccompArg
		want unix.Errno
	}{
		{"match", []*configs.SeccompArg{mode("SCMP_CMP_EQ", 0o755)}, unix.EPERM},
		{"no match", []*configs.SeccompArg{mode("SCMP_CMP_EQ", 0o700)}, 0},
		{"masked", []*configs.SeccompArg{{Index: 1, Value: 0o700, ValueTwo: 0o700, Op: "SCMP_CMP_MASKED_EQ"}}, unix.EPERM},
		{"same arg twice, one matches", []*configs.SeccompArg{mode("SCMP_CMP_EQ", 0o700), mode("SCMP_CMP_EQ", 0o755)}, unix.EPERM},
		{"two args, both must hold", []*configs.SeccompArg{mode("SCMP_CMP_EQ", 0o755), {Index: 0, Value: 0, Op: "SCMP_CMP_EQ"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule := errnoRule([]string{"mkdir"}, nil)
			rule.Args = tc.args
			s := &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Syscalls: []*configs.Syscall{rule}}
			if got, want := runChild(t, s, nil), fmt.Sprintf("errno=%d", tc.want); got != want {
				t.Errorf("child printed %q, want %q", got, want)
			}
		})
	}
}

// A rule with the default action is no rule; libseccomp would refuse it.
func TestRuleWithDefaultActionIsSkipped(t *testing.T) {
	s := &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Syscalls: []*configs.Syscall{
		{Names: []string{"mkdir"}, Action: "SCMP_ACT_ALLOW"},
	}}
	if got := runChild(t, s, nil); got != "errno=0" {
		t.Errorf("child printed %q", got)
	}
}

func TestEveryActionCompiles(t *testing.T) {
	for name := range actions {
		s := &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", ListenerPath: "/l",
			Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: name}}}
		if err := Compile(s); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		s    configs.Seccomp
		want uint
	}{
		{configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW"}, 0},
		{configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Flags: []string{"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"}},
			unix.SECCOMP_FILTER_FLAG_LOG | unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW},
		{configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_NOTIFY"}}},
			unix.SECCOMP_FILTER_FLAG_NEW_LISTENER},
		{configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Flags: []string{"SECCOMP_FILTER_FLAG_TSYNC"},
			Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_NOTIFY"}}},
			unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH},
	} {
		s := tc.s
		if err := Compile(&s); err != nil {
			t.Fatalf("Compile: %v", err)
		}
		if s.Program.Flags != tc.want {
			t.Errorf("flags %v: got %#x, want %#x", tc.s.Flags, s.Program.Flags, tc.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		s    configs.Seccomp
		want string
	}{
		{configs.Seccomp{DefaultAction: "SCMP_ACT_NOPE"}, `linux.seccomp.defaultAction: unknown action "SCMP_ACT_NOPE"`},
		{configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Architectures: []string{"SCMP_ARCH_Z80"}}, `linux.seccomp.architectures[0]: "SCMP_ARCH_Z80"`},
		{configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Syscalls: []*configs.Syscall{{Names: []string{"read"}, Action: "SCMP_ACT_ERRNO",
			Args: []*configs.SeccompArg{{Op: "SCMP_CMP_XX"}}}}}, `linux.seccomp.syscalls[0]: args[0].op: unknown operator "SCMP_CMP_XX"`},
		{configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", Flags: []string{"SECCOMP_FILTER_FLAG_X"}}, `linux.seccomp.flags[0]: unknown flag "SECCOMP_FILTER_FLAG_X"`},
	} {
		s := tc.s
		if err := Compile(&s); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("error %v, want one starting %q", err, tc.want)
		}
	}
}

// The notify fd and the state reach the listener; a mkdir of the child
// waits for the listener's answer.
func TestNotifyListener(t *testing.T) {
	api, err := libseccomp.GetAPI()
	if err != nil || api < 6 {
		t.Skipf("libseccomp API level %d has no user notification", api)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours := os.NewFile(uintptr(fds[0]), "listener")
	theirs := os.NewFile(uintptr(fds[1]), "child")
	defer ours.Close()
	type result struct {
		state specs.ContainerProcessState
		err   error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.state, r.err = serveOne(ours, unix.ENOSPC)
		done <- r
	}()
	s := &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", ListenerPath: "/l",
		Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_NOTIFY"}}}
	got := runChild(t, s, theirs)
	theirs.Close()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("listener got nothing")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got != fmt.Sprintf("errno=%d", unix.ENOSPC) {
		t.Errorf("child printed %q, want the listener's ENOSPC", got)
	}
	st := r.state
	if len(st.Fds) != 1 || st.Fds[0] != specs.SeccompFdName || st.Metadata != "meta" || st.State.ID != "c1" || st.Pid <= 0 {
		t.Errorf("state %+v", st)
	}
}

// serveOne receives the fd and state, answers one notification with errno.
func serveOne(conn *os.File, errno unix.Errno) (specs.ContainerProcessState, error) {
	var st specs.ContainerProcessState
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(conn.Fd()), buf, oob, 0)
	if err != nil {
		return st, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return st, fmt.Errorf("control messages: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return st, fmt.Errorf("unix rights: %v", err)
	}
	defer unix.Close(fds[0])
	if err := json.Unmarshal(buf[:n], &st); err != nil {
		return st, err
	}
	req, err := libseccomp.NotifReceive(libseccomp.ScmpFd(fds[0]))
	if err != nil {
		return st, fmt.Errorf("receive notification: %w", err)
	}
	if name, _ := req.Data.Syscall.GetName(); name != "mkdir" {
		return st, errors.New("notified of " + name)
	}
	resp := &libseccomp.ScmpNotifResp{ID: req.ID, Error: int32(errno)}
	return st, libseccomp.NotifRespond(libseccomp.ScmpFd(fds[0]), resp)
}
