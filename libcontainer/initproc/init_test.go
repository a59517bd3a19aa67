package initproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"golang.org/x/sys/unix"
)

// Go init's build against a fake kernel (kernel.go) and a fake parent on
// a real socketpair: the order of its steps, what it hands pid 1, and
// what each failure stops, without root.

// fakeKernel records each call; fail makes the named call fail.
type fakeKernel struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]error
	// handed are the fds sendmsg carried to pid 1.
	handed []int
	// noDevNull: setupRootfs cloned no /dev/null (no mount namespace).
	noDevNull bool
}

func (f *fakeKernel) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	return f.fail[strings.Fields(name)[0]]
}

func (f *fakeKernel) kernel() *kernel {
	return &kernel{
		setupRootfs: func(cfg *configs.Config, atMount func() error, _ rootfs.SourceOpener) error {
			if err := f.call("mount"); err != nil {
				return err
			}
			if err := atMount(); err != nil {
				return err
			}
			return f.call("pivot_root")
		},
		// The host's /dev/null clone setupRootfs made, for pid 1.
		takeDevNull: func() int {
			if f.noDevNull {
				return -1
			}
			return 88
		},
		openPty: func(sock int, hasSize bool, rows, cols uint16, uid uint32) (int, error) {
			return 77, f.call(fmt.Sprintf("openpty %dx%d uid %d", rows, cols, uid))
		},
		loopbackUp: func() error { return f.call("lo up") },
		openRoot:   func() (int, error) { return 66, f.call("open /") },
		sendmsg: func(fd int, p, oob []byte) error {
			msgs, err := unix.ParseSocketControlMessage(oob)
			if err != nil || len(msgs) != 1 {
				return fmt.Errorf("bad SCM_RIGHTS: %v", err)
			}
			f.handed, _ = unix.ParseUnixRights(&msgs[0])
			return f.call(fmt.Sprintf("sendmsg %#x", p))
		},
		close: func(fd int) error { return f.call("close " + strconv.Itoa(fd)) },
	}
}

// fakeParent sends CONFIG with flags, and answers CREATE_HOOKS; it
// records the frames it got.
func fakeParent(t *testing.T, sock *os.File, cfg *configs.Config, flags bootstrap.ConfigFlags, got *[]string) {
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Error(err)
		return
	}
	if err := bootstrap.Send(sock, bootstrap.SyncConfig, bootstrap.ConfigPayload(flags, data)); err != nil {
		return
	}
	for {
		typ, _, err := bootstrap.Recv(sock)
		if err != nil {
			return
		}
		*got = append(*got, typ.String())
		if typ == bootstrap.SyncCreateHooks {
			bootstrap.Send(sock, bootstrap.SyncCreateHooksDone, nil)
		}
	}
}

// socketpair returns both ends; the test closes them.
func socketpair(t *testing.T) (*os.File, *os.File) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// runBuild runs build with cfg, the fake kernel and a fake parent, and
// returns its error and the frames the parent got.
func runBuild(t *testing.T, f *fakeKernel, cfg *configs.Config, flags bootstrap.ConfigFlags) (error, []string) {
	sock, parent := socketpair(t)
	launcher, _ := socketpair(t)
	t.Setenv(bootstrap.EnvLauncherFd, strconv.Itoa(int(launcher.Fd())))
	if cfg.Process.Terminal {
		console, _ := socketpair(t)
		t.Setenv(bootstrap.EnvConsoleFd, strconv.Itoa(int(console.Fd())))
	}
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		fakeParent(t, parent, cfg, flags, &got)
	}()
	err := build(f.kernel(), sock)
	sock.Close()
	<-done
	return err, got
}

func buildConfig() *configs.Config {
	return &configs.Config{
		Hostname: "box", Domainname: "example",
		Namespaces: []configs.Namespace{{Type: configs.NEWNS}},
		Sysctl:     map[string]string{"net.ipv4.ip_forward": "1"},
		Process:    &configs.Process{Args: []string{"sh"}, User: configs.User{UID: 1000}},
	}
}

func TestBuildOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool
		flags    bootstrap.ConfigFlags
		calls    []string
		frames   []string
		handed   []int
	}{
		{"no terminal", false, 0,
			[]string{"mount", "pivot_root", "open /", "sendmsg 0x02"},
			nil, []int{66, 88}},
		{"asked to stop at CREATE_HOOKS", false, bootstrap.ConfigAskHooks,
			[]string{"mount", "pivot_root", "open /", "sendmsg 0x02"},
			[]string{"CREATE_HOOKS"}, []int{66, 88}},
		{"a terminal: pid 1 makes the console, none is made here", true, 0,
			[]string{"mount", "pivot_root", "open /", "sendmsg 0x02"},
			nil, []int{66, 88}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := buildConfig()
			cfg.Process.Terminal = tc.terminal
			f := &fakeKernel{}
			err, frames := runBuild(t, f, cfg, tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.calls, tc.calls) {
				t.Errorf("calls\n%q, want\n%q", f.calls, tc.calls)
			}
			if !slices.Equal(frames, tc.frames) {
				t.Errorf("frames to the parent %q, want %q", frames, tc.frames)
			}
			if !slices.Equal(f.handed, tc.handed) {
				t.Errorf("handed over %v, want %v", f.handed, tc.handed)
			}
		})
	}
}

// Each failure is the error the user reads, naming the field, and stops
// everything after it: pid 1 gets nothing.
func TestBuildErrors(t *testing.T) {
	eperm := unix.EPERM
	for _, tc := range []struct {
		call     string
		terminal bool
		want     string
		last     string // the last call made
	}{
		{"mount", false, "operation not permitted", "mount"},
		{"pivot_root", false, "operation not permitted", "pivot_root"},
		{"open", false, "hand over to pid 1: open /: operation not permitted", "open /"},
		{"sendmsg", false, "hand over to pid 1: operation not permitted", "sendmsg 0x02"},
	} {
		t.Run(tc.call, func(t *testing.T) {
			cfg := buildConfig()
			cfg.Process.Terminal = tc.terminal
			f := &fakeKernel{fail: map[string]error{tc.call: eperm}}
			err, _ := runBuild(t, f, cfg, 0)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if last := f.calls[len(f.calls)-1]; last != tc.last {
				t.Errorf("last call %q, want %q (calls %q)", last, tc.last, f.calls)
			}
		})
	}
}

// What the parent sends wrong, or not at all, stops build before the
// kernel is touched.
func TestBuildBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload []byte
		want    string
	}{
		{"unknown flags", []byte{0x80, '{', '}'}, "CONFIG with unknown flags 0x80 (is husk init the same version as husk?)"},
		{"no flags byte", nil, "CONFIG without its flags byte"},
		{"not JSON", []byte{0, 'x'}, "decode config: invalid character 'x' looking for beginning of value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock, parent := socketpair(t)
			go bootstrap.Send(parent, bootstrap.SyncConfig, tc.payload)
			f := &fakeKernel{}
			err := build(f.kernel(), sock)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if len(f.calls) != 0 {
				t.Errorf("kernel calls %q", f.calls)
			}
		})
	}
	sock, parent := socketpair(t)
	parent.Close()
	if err := build((&fakeKernel{}).kernel(), sock); err == nil || err.Error() != "read config: EOF" {
		t.Errorf("parent gone: %v, want read config: EOF", err)
	}
}

// A terminal without the parent's connection to the console socket is
// refused before anything is mounted.
func TestBuildTerminalWithoutConsole(t *testing.T) {
	sock, parent := socketpair(t)
	launcher, _ := socketpair(t)
	t.Setenv(bootstrap.EnvLauncherFd, strconv.Itoa(int(launcher.Fd())))
	t.Setenv(bootstrap.EnvConsoleFd, "")
	cfg := buildConfig()
	cfg.Process.Terminal = true
	var got []string
	go fakeParent(t, parent, cfg, 0, &got)
	f := &fakeKernel{}
	err := build(f.kernel(), sock)
	if want := "process.terminal: the parent passed no connection to the console socket"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if len(f.calls) != 0 {
		t.Errorf("kernel calls %q", f.calls)
	}
}

// A new network namespace gets lo up before the rootfs (as runc: the
// create hooks see it); a joined one is left as it is.
func TestBuildLoopback(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ns    configs.Namespace
		first string
	}{
		{"new netns", configs.Namespace{Type: configs.NEWNET}, "lo up"},
		{"joined netns", configs.Namespace{Type: configs.NEWNET, Path: "/var/run/netns/x"}, "mount"},
		{"no netns", configs.Namespace{Type: configs.NEWUTS}, "mount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := buildConfig()
			cfg.Namespaces = append(cfg.Namespaces, tc.ns)
			f := &fakeKernel{}
			if err, _ := runBuild(t, f, cfg, 0); err != nil {
				t.Fatal(err)
			}
			if f.calls[0] != tc.first || slices.Contains(f.calls[1:], "lo up") {
				t.Errorf("calls %q, want %q first and lo up at most once", f.calls, tc.first)
			}
		})
	}
	cfg := buildConfig()
	cfg.Namespaces = append(cfg.Namespaces, configs.Namespace{Type: configs.NEWNET})
	f := &fakeKernel{fail: map[string]error{"lo": unix.EPERM}}
	err, _ := runBuild(t, f, cfg, 0)
	if want := "linux.namespaces: new network namespace: operation not permitted"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if len(f.calls) != 1 {
		t.Errorf("calls after a failed lo up: %q", f.calls)
	}
}

// Init's error reaches the parent; when the parent hung up (it failed,
// and says why), init adds no line of its own to stderr.
func TestReport(t *testing.T) {
	gone := errors.New("mount: boom")
	for _, tc := range []struct {
		name       string
		err        error
		parentGone bool
		stderr     string
	}{
		{"parent there", gone, false, ""},
		{"parent hung up before config", fmt.Errorf("read config: %w", io.EOF), true, ""},
		{"parent hung up during the hooks", fmt.Errorf("wait for the createRuntime hooks: %w", io.ErrUnexpectedEOF), true, ""},
		{"parent hung up, init's own failure", gone, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock, parent := socketpair(t)
			if tc.parentGone {
				parent.Close()
			}
			var out strings.Builder
			report(sock, tc.err, &out)
			if out.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", out.String(), tc.stderr)
			}
			if !tc.parentGone {
				typ, payload, err := bootstrap.Recv(parent)
				if err != nil || typ != bootstrap.SyncError || string(payload) != tc.err.Error() {
					t.Errorf("parent got %v %q %v", typ, payload, err)
				}
			}
		})
	}
}

// Without a mount namespace the pty is made before the chroot (from the
// host's /dev/ptmx) and never bound onto /dev/console, as runc.
func TestBuildTerminalWithoutMountNamespace(t *testing.T) {
	cfg := buildConfig()
	cfg.Namespaces = nil
	cfg.Process.Terminal = true
	f := &fakeKernel{noDevNull: true}
	if err, _ := runBuild(t, f, cfg, 0); err != nil {
		t.Fatal(err)
	}
	want := []string{"openpty 0x0 uid 1000", "mount", "pivot_root", "open /", "sendmsg 0x01"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls\n%q, want\n%q", f.calls, want)
	}
	if !slices.Equal(f.handed, []int{66, 77}) {
		t.Errorf("handed over %v", f.handed)
	}
	f = &fakeKernel{noDevNull: true, fail: map[string]error{"openpty": unix.EPERM}}
	if err, _ := runBuild(t, f, cfg, 0); err == nil || err.Error() != "operation not permitted" {
		t.Errorf("a failed pty: %v", err)
	}
	if !slices.Equal(f.calls, []string{"openpty 0x0 uid 1000"}) {
		t.Errorf("a failed pty: calls %q", f.calls)
	}
}
