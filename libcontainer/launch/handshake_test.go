package launch

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootless"
	"golang.org/x/sys/unix"
)

// The parent side of the handshake (runNsexec, configureInit) against a
// fake init: the other end of a real socketpair, scripted step by step.

// peer is the fake nsexec / Go init.
type peer struct {
	t *testing.T
	f *os.File
}

// handshakePair is a connected parent socket and a peer on its other end.
func handshakePair(t *testing.T) (*credReader, *peer) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The peer's end is non-blocking, so closing it (run does when the
	// parent gave up) wakes a peer blocked reading it.
	if err := unix.SetNonblock(fds[1], true); err != nil {
		t.Fatal(err)
	}
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		t.Fatal(err)
	}
	parent := os.NewFile(uintptr(fds[0]), "parent")
	p := &peer{t: t, f: os.NewFile(uintptr(fds[1]), "peer")}
	t.Cleanup(func() { parent.Close(); p.f.Close() })
	return &credReader{File: parent, what: "init socket"}, p
}

// run runs script as the peer while fn talks to it, and returns fn's
// result once both are done.
func run[T any](p *peer, script func(*peer), fn func() T) T {
	done := make(chan struct{})
	go func() {
		defer close(done)
		script(p)
	}()
	res := fn()
	// A parent that returned early must not leave the peer blocked.
	p.f.Close()
	<-done
	return res
}

// readBootstrap reads the netlink bootstrap message, as nsexec does.
func (p *peer) readBootstrap() {
	var hdr [16]byte
	if _, err := io.ReadFull(p.f, hdr[:]); err != nil {
		p.t.Errorf("peer: read the bootstrap header: %v", err)
		return
	}
	n := binary.NativeEndian.Uint32(hdr[0:4])
	if typ := binary.NativeEndian.Uint16(hdr[4:6]); typ != bootstrap.MsgType {
		p.t.Errorf("peer: bootstrap message type %d, want %d", typ, bootstrap.MsgType)
	}
	if _, err := io.ReadFull(p.f, make([]byte, n-16)); err != nil {
		p.t.Errorf("peer: read the bootstrap attributes: %v", err)
	}
}

func (p *peer) send(t bootstrap.SyncType, payload []byte) {
	// The parent may have given up already: that is what some cases test.
	bootstrap.Send(p.f, t, payload)
}

// sendHeader sends a frame header announcing n payload bytes, and only
// the payload bytes in part.
func (p *peer) sendHeader(t bootstrap.SyncType, n uint32, part []byte) {
	buf := make([]byte, 8, 8+len(part))
	binary.NativeEndian.PutUint32(buf[0:4], uint32(t))
	binary.NativeEndian.PutUint32(buf[4:8], n)
	p.f.Write(append(buf, part...))
}

func (p *peer) expect(want bootstrap.SyncType) []byte {
	t, payload, err := bootstrap.Recv(p.f)
	if err != nil {
		p.t.Errorf("peer: waiting for %s: %v", want, err)
		return nil
	}
	if t != want {
		p.t.Errorf("peer: got %s, want %s", t, want)
	}
	return payload
}

// die closes the peer's end, as the kernel does when init dies.
func (p *peer) die() { p.f.Close() }

// newUserns starts a process in a new user namespace whose maps are not
// written yet, as nsexec is when it sends USERMAP_PLS.
func newUserns(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &unix.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot make a user namespace here: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// sendAndRunNsexec is the parent's steps 1-4: the message, then nsexec's
// answers.
func sendAndRunNsexec(sock *credReader, msg *bootstrap.Message, maps *rootless.MapWriter) (int, error) {
	b, err := msg.Encode()
	if err != nil {
		return 0, err
	}
	if err := sendBootstrap(sock, b); err != nil {
		return 0, err
	}
	return runNsexec(sock, MapperOf(maps))
}

const nsexecGone = "nsexec exited without reporting an error (see its output above)"

func TestRunNsexec(t *testing.T) {
	plain := &bootstrap.Message{CloneFlags: unix.CLONE_NEWNS}
	for _, tc := range []struct {
		name    string
		msg     *bootstrap.Message
		script  func(p *peer, userns int)
		pid     int
		wantErr string
	}{
		{"in order, no user namespace", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.send(bootstrap.SyncPid, bootstrap.PidPayload(4242))
		}, 4242, ""},
		{"dies before reading the message", plain, func(p *peer, _ int) {
			p.die()
		}, 0, nsexecGone},
		{"dies after the message", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.die()
		}, 0, nsexecGone},
		{"dies after USERMAP_PLS", nil, func(p *peer, userns int) {
			p.readBootstrap()
			p.send(bootstrap.SyncUsermapPls, bootstrap.PidPayload(userns))
			p.die()
		}, 0, nsexecGone},
		{"dies after USERMAP_ACK", nil, func(p *peer, userns int) {
			p.readBootstrap()
			p.send(bootstrap.SyncUsermapPls, bootstrap.PidPayload(userns))
			p.expect(bootstrap.SyncUsermapAck)
			p.die()
		}, 0, nsexecGone},
		{"reports an error", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.send(bootstrap.SyncError, []byte("nsexec: setns(net:/var/run/netns/x): Invalid argument"))
		}, 0, "nsexec: setns(net:/var/run/netns/x): Invalid argument"},
		{"reports an error without text", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.send(bootstrap.SyncError, nil)
		}, 0, "nsexec failed without saying why"},
		{"sends an unknown type", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.send(99, nil)
		}, 0, "nsexec sent an unexpected sync(99) message (is husk init the same version as husk?)"},
		{"sends a message of the Go init", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.send(bootstrap.SyncReady, nil)
		}, 0, "nsexec sent an unexpected READY message (is husk init the same version as husk?)"},
		{"sends a short frame and dies", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.f.Write([]byte{3, 0, 0})
			p.die()
		}, 0, nsexecGone},
		{"sends part of a payload and dies", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.sendHeader(bootstrap.SyncError, 100, []byte("nsexec: se"))
			p.die()
		}, 0, nsexecGone},
		{"sends an oversized frame", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.sendHeader(bootstrap.SyncError, 1<<30, nil)
		}, 0, "nsexec: sync frame ERROR: payload of 1073741824 bytes is too large"},
		{"asks for id maps without a user namespace to make", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.send(bootstrap.SyncUsermapPls, bootstrap.PidPayload(1))
		}, 0, "nsexec asked for id maps, but no user namespace was to be made"},
		{"sends a bad pid", plain, func(p *peer, _ int) {
			p.readBootstrap()
			p.send(bootstrap.SyncPid, []byte{1, 2})
		}, 0, "nsexec sent a bad PID: pid payload of 2 bytes, want 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, userns := tc.msg, 0
			var maps *rootless.MapWriter
			if msg == nil {
				userns = newUserns(t)
				msg, maps = rootMaps()
			}
			sock, p := handshakePair(t)
			type result struct {
				pid int
				err error
			}
			got := run(p, func(p *peer) { tc.script(p, userns) }, func() result {
				pid, err := sendAndRunNsexec(sock, msg, maps)
				return result{pid, err}
			})
			checkErr(t, got.err, tc.wantErr)
			if got.pid != tc.pid {
				t.Errorf("pid %d, want %d", got.pid, tc.pid)
			}
		})
	}
}

// With a new user namespace: the parent writes the maps on USERMAP_PLS,
// answers USERMAP_ACK, and takes the pid.
func TestRunNsexecWritesIDMaps(t *testing.T) {
	userns := newUserns(t)
	msg, maps := rootMaps()
	sock, p := handshakePair(t)
	type result struct {
		pid int
		err error
	}
	got := run(p, func(p *peer) {
		p.readBootstrap()
		p.send(bootstrap.SyncUsermapPls, bootstrap.PidPayload(userns))
		p.expect(bootstrap.SyncUsermapAck)
		for _, f := range []string{"uid_map", "gid_map"} {
			data, err := os.ReadFile("/proc/" + strconv.Itoa(userns) + "/" + f)
			if err != nil || string(data) != "         0          0          1\n" {
				p.t.Errorf("peer: %s before ACK: %q, %v", f, data, err)
			}
		}
		p.send(bootstrap.SyncPid, bootstrap.PidPayload(777))
	}, func() result {
		pid, err := sendAndRunNsexec(sock, msg, maps)
		return result{pid, err}
	})
	if got.err != nil || got.pid != 777 {
		t.Errorf("pid %d, %v", got.pid, got.err)
	}
}

const initGoneText = "init exited without reporting an error (see its output above)"

func TestConfigureInit(t *testing.T) {
	hookErr := errors.New(`hooks.createRuntime[0]: /bin/false: exit status 1`)
	for _, tc := range []struct {
		name    string
		hooks   error // what the runtime hooks return
		script  func(p *peer)
		ran     int // times the runtime hooks ran
		wantErr string
	}{
		{"in order, no hooks", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncReady, nil)
		}, 0, ""},
		{"in order, with createRuntime hooks", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncCreateHooks, nil)
			p.expect(bootstrap.SyncCreateHooksDone)
			p.send(bootstrap.SyncReady, nil)
		}, 1, ""},
		{"asks for the source of a mount the parent does not open", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncMountSource, bootstrap.PidPayload(5))
			if got := string(p.expect(bootstrap.SyncMountFd)); got != "MOUNT_SOURCE for mounts[5], which is not a bind opened outside" {
				p.t.Errorf("MOUNT_FD answer %q", got)
			}
			p.send(bootstrap.SyncReady, nil)
		}, 0, ""},
		{"dies after MOUNT_SOURCE", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncMountSource, bootstrap.PidPayload(0))
			p.die()
		}, 0, initGoneText},
		{"dies before reading the config", nil, func(p *peer) {
			p.die()
		}, 0, initGoneText},
		{"dies after the config", nil, func(p *peer) {
			p.checkConfig()
			p.die()
		}, 0, initGoneText},
		{"dies after CREATE_HOOKS", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncCreateHooks, nil)
			p.die()
		}, 1, initGoneText},
		{"dies after CREATE_HOOKS_DONE", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncCreateHooks, nil)
			p.expect(bootstrap.SyncCreateHooksDone)
			p.die()
		}, 1, initGoneText},
		{"a createRuntime hook fails", hookErr, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncCreateHooks, nil)
		}, 1, hookErr.Error()},
		{"reports an error", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncError, []byte(`mounts[3]: mount proc on "/proc": permission denied`))
		}, 0, `mounts[3]: mount proc on "/proc": permission denied`},
		{"sends an unknown type", nil, func(p *peer) {
			p.checkConfig()
			p.send(99, []byte("?"))
		}, 0, "init sent an unexpected sync(99) message (is husk init the same version as husk?)"},
		{"sends a message of nsexec", nil, func(p *peer) {
			p.checkConfig()
			p.send(bootstrap.SyncPid, bootstrap.PidPayload(1))
		}, 0, "init sent an unexpected PID message (is husk init the same version as husk?)"},
		{"sends a short frame and dies", nil, func(p *peer) {
			p.checkConfig()
			p.f.Write([]byte{6, 0})
			p.die()
		}, 0, initGoneText},
		{"sends an oversized frame", nil, func(p *peer) {
			p.checkConfig()
			p.sendHeader(bootstrap.SyncError, 1<<30, []byte("x"))
		}, 0, "init: sync frame ERROR: payload of 1073741824 bytes is too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock, p := handshakePair(t)
			ran := 0
			// Init is asked to stop at CREATE_HOOKS where the script does.
			var atHooks func() error
			if tc.ran > 0 {
				atHooks = func() error { ran++; return tc.hooks }
			}
			err := run(p, tc.script, func() error {
				return configureInit(sock, testConfig(), 0, atHooks)
			})
			checkErr(t, err, tc.wantErr)
			if ran != tc.ran {
				t.Errorf("the runtime hooks ran %d times, want %d", ran, tc.ran)
			}
		})
	}
}

// testConfig has no mount namespace: its plan is a chroot into Rootfs
// and a missing cwd, decided without pid 1's mount table.
func testConfig() *configs.Config {
	return &configs.Config{ID: "fake", Rootfs: "/fake-root", Process: &configs.Process{Args: []string{"sh"}, Cwd: "/work"}}
}

// checkConfig reads CONFIG, checks it is the parent's (a chroot into
// the config's rootfs, with a mount plan), and returns its flags.
func (p *peer) checkConfig() bootstrap.RootfsFlags {
	r, err := bootstrap.DecodeRootfs(p.expect(bootstrap.SyncConfig))
	if err != nil {
		p.t.Errorf("peer: CONFIG: %v", err)
		return 0
	}
	if r.Chroot != "/fake-root" || r.Flags&bootstrap.RootfsChroot == 0 || len(r.Mounts) == 0 {
		p.t.Errorf("peer: CONFIG %+v, want a chroot into /fake-root with a mount plan", r)
	}
	return r.Flags &^ bootstrap.RootfsChroot
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("error %q, want none", err)
	case want != "" && (err == nil || err.Error() != want):
		t.Errorf("error %v, want %q", err, want)
	}
}

// rootMaps is a new user namespace mapping root to root, as the message
// and as the parent's map writer.
func rootMaps() (*bootstrap.Message, *rootless.MapWriter) {
	one := []configs.IDMap{{ContainerID: 0, HostID: 0, Size: 1}}
	return &bootstrap.Message{CloneFlags: unix.CLONE_NEWUSER, UIDMap: "0 0 1\n", GIDMap: "0 0 1\n"},
		&rootless.MapWriter{UID: one, GID: one}
}
