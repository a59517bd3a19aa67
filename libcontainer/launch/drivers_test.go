package launch

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"golang.org/x/sys/unix"
)

// Each driver of a start (drivers.go) against a fake husk init: the peer
// plays nsexec, the launcher and Go init on a real socketpair, and the
// parent runs converse, as Start does once husk init is started
// (child is its pid: nothing is started here, nothing needs root).

// events records what the parent's callbacks did, in order.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, s)
}

func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.list)
}

// start plays nsexec up to PID: the bootstrap message, the PLAN, HELLO,
// GO for an exec, PID.
func (p *peer) start(exec bool, pid int) {
	p.readBootstrap()
	p.expect(bootstrap.SyncPlan)
	p.send(bootstrap.SyncHello, nil)
	if exec {
		p.expect(bootstrap.SyncGo)
	}
	p.send(bootstrap.SyncPid, bootstrap.PidPayload(pid))
}

// converseWith runs r's conversation with script as the peer; child is
// husk init's pid, born whether clone3 put it in the cgroups. It returns
// the pid, the error, and whether the view was sealed.
func converseWith(t *testing.T, r *Request, child int, born bool, script func(*peer)) (int, error, bool) {
	t.Helper()
	if r.Msg == nil {
		r.Msg = &bootstrap.Message{}
	}
	if r.Plan == nil {
		r.Plan = &bootstrap.Plan{Args: []string{"true"}, Cwd: "/"}
	}
	msg, err := r.Msg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	sock, p := handshakePair(t)
	sealed := false
	type result struct {
		pid int
		err error
	}
	res := run(p, script, func() result {
		pid, err := r.converse(sock, child, born, msg, func() error { sealed = true; return nil }, nil)
		return result{pid, err}
	})
	return res.pid, res.err, sealed
}

// createRequest is a create with callbacks that record into ev.
func createRequest(ev *events, askHooks bool, limitsErr error) *Request {
	return &Request{
		Config: testConfig(),
		Steps: CreateSteps{
			Config:   testConfig(),
			Limits:   func() error { ev.add("limits"); return limitsErr },
			Hooks:    func(pid int) error { ev.add("hooks"); return nil },
			AskHooks: askHooks,
		},
		Cgroups: movedIn(nil),
	}
}

func TestCreateDriver(t *testing.T) {
	limitsErr := errors.New("linux.resources.memory.limit: write 5: invalid argument")
	for _, tc := range []struct {
		name      string
		askHooks  bool
		limitsErr error
		script    func(p *peer, ev *events)
		want      []string // the callbacks, in order
		wantErr   string
	}{
		{"no hooks: the limits before CONFIG, which does not ask", false, nil, func(p *peer, ev *events) {
			p.start(false, 42)
			if f := p.checkConfig(); f != 0 {
				p.t.Errorf("CONFIG flags %#x, want none", f)
			}
			if got := ev.get(); !slices.Equal(got, []string{"limits", "hooks"}) {
				p.t.Errorf("at CONFIG the parent had run %v", got)
			}
			p.send(bootstrap.SyncReady, nil)
		}, []string{"limits", "hooks"}, ""},
		{"hooks or a pids limit: CONFIG asks, the limits at CREATE_HOOKS", true, nil, func(p *peer, ev *events) {
			p.start(false, 42)
			if f := p.checkConfig(); f != bootstrap.RootfsAskHooks {
				p.t.Errorf("CONFIG flags %#x, want RootfsAskHooks", f)
			}
			if got := ev.get(); len(got) != 0 {
				p.t.Errorf("at CONFIG the parent had run %v already", got)
			}
			p.send(bootstrap.SyncCreateHooks, nil)
			p.expect(bootstrap.SyncCreateHooksDone)
			p.send(bootstrap.SyncReady, nil)
		}, []string{"limits", "hooks"}, ""},
		{"asked, init says READY without CREATE_HOOKS", true, nil, func(p *peer, ev *events) {
			p.start(false, 42)
			p.checkConfig()
			p.send(bootstrap.SyncReady, nil)
		}, nil, "init sent READY without stopping at CREATE_HOOKS, as asked: the cgroup limits and the prestart and createRuntime hooks did not run"},
		{"not asked, init sends CREATE_HOOKS", false, nil, func(p *peer, ev *events) {
			p.start(false, 42)
			p.checkConfig()
			p.send(bootstrap.SyncCreateHooks, nil)
		}, []string{"limits", "hooks"}, "init sent an unexpected CREATE_HOOKS message (is husk init the same version as husk?)"},
		{"the limits fail: no CONFIG", false, limitsErr, func(p *peer, ev *events) {
			p.start(false, 42)
		}, []string{"limits"}, limitsErr.Error()},
		{"init dies after PID", false, nil, func(p *peer, ev *events) {
			p.start(false, 42)
			p.die()
		}, []string{"limits", "hooks"}, initGoneText},
		{"nsexec dies before HELLO", false, nil, func(p *peer, ev *events) {
			p.readBootstrap()
			p.die()
		}, nil, nsexecGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := &events{}
			r := createRequest(ev, tc.askHooks, tc.limitsErr)
			pid, err, _ := converseWith(t, r, 7, true, func(p *peer) { tc.script(p, ev) })
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && pid != 42 {
				t.Errorf("pid %d, want 42", pid)
			}
			if got := ev.get(); !slices.Equal(got, tc.want) {
				t.Errorf("callbacks %v, want %v", got, tc.want)
			}
		})
	}
}

func TestExecDriver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		script  func(p *peer)
		wantErr string
	}{
		{"GO after HELLO, then READY", func(p *peer) {
			p.start(true, 43)
			p.send(bootstrap.SyncReady, nil)
		}, ""},
		{"the launcher's ERROR after PID", func(p *peer) {
			p.start(true, 43)
			p.send(bootstrap.SyncError, []byte(`process.cwd "/nope": chdir: no such file or directory`))
		}, `process.cwd "/nope": chdir: no such file or directory`},
		{"the launcher's ERROR instead of PID", func(p *peer) {
			p.readBootstrap()
			p.expect(bootstrap.SyncPlan)
			p.send(bootstrap.SyncHello, nil)
			p.expect(bootstrap.SyncGo)
			p.send(bootstrap.SyncError, []byte("setns net: invalid argument"))
		}, "setns net: invalid argument"},
		{"dies after PID", func(p *peer) {
			p.start(true, 43)
			p.die()
		}, initGoneText},
		{"an exec gets no CONFIG and takes no CREATE_HOOKS", func(p *peer) {
			p.start(true, 43)
			p.send(bootstrap.SyncCreateHooks, nil)
		}, "init sent an unexpected CREATE_HOOKS message (is husk init the same version as husk?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Request{Config: testConfig(), Steps: ExecSteps{testConfig()}, Cgroups: movedIn(nil)}
			pid, err, sealed := converseWith(t, r, 7, true, tc.script)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && pid != 43 {
				t.Errorf("pid %d, want 43", pid)
			}
			if !sealed {
				t.Error("the binary's view was not sealed at HELLO")
			}
		})
	}
}

// The systemd driver (and rootless on v1, exec --cgroup): init is moved
// in by pid before nsexec gets its message.
func TestMovedInDriver(t *testing.T) {
	ev := &events{}
	join := func(pid int) error { ev.add("join " + strconv.Itoa(pid)); return nil }
	r := &Request{Config: testConfig(), Steps: ExecSteps{testConfig()}, Cgroups: CgroupsFor(nil, join)}
	pid, err, _ := converseWith(t, r, 7, false, func(p *peer) {
		p.readBootstrap()
		if got := ev.get(); !slices.Equal(got, []string{"join 7"}) {
			p.t.Errorf("at the bootstrap message the parent had run %v", got)
		}
		p.expect(bootstrap.SyncPlan)
		p.send(bootstrap.SyncHello, nil)
		p.expect(bootstrap.SyncGo)
		p.send(bootstrap.SyncPid, bootstrap.PidPayload(43))
		p.send(bootstrap.SyncReady, nil)
	})
	if err != nil || pid != 43 {
		t.Errorf("pid %d, error %v", pid, err)
	}
}

// A failed move sends nsexec nothing: the error is the parent's.
func TestMovedInDriverFails(t *testing.T) {
	joinErr := errors.New("move pid 7 into cgroup husk-x.scope: permission denied")
	r := &Request{Config: testConfig(), Steps: ExecSteps{testConfig()}, Msg: &bootstrap.Message{},
		Cgroups: movedIn(func(int) error { return joinErr })}
	sock, p := handshakePair(t)
	_, err := r.converse(sock, 7, false, nil, func() error { t.Error("sealed"); return nil }, nil)
	if !errors.Is(err, joinErr) {
		t.Errorf("error %v, want %v", err, joinErr)
	}
	if n, err := unix.IoctlGetInt(int(p.f.Fd()), unix.SIOCINQ); err != nil || n != 0 {
		t.Errorf("nsexec got %d bytes (%v)", n, err)
	}
}

// The cgroupfs driver: init born in the v2 directory is not moved; one
// that clone3 could not put there is.
func TestBornInDriver(t *testing.T) {
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, born := range []bool{true, false} {
		ev := &events{}
		join := func(pid int) error { ev.add("join " + strconv.Itoa(pid)); return nil }
		e := CgroupsFor(&cgroup.Entry{Dir: dir}, join)
		if d, _ := e.files(); d != dir {
			t.Errorf("born %v: files gave %v, want the v2 directory", born, d)
		}
		if err := e.enter(7, born); err != nil {
			t.Fatal(err)
		}
		want := []string{"join 7"}
		if born {
			want = nil
		}
		if got := ev.get(); !slices.Equal(got, want) {
			t.Errorf("born %v: %v, want %v", born, got, want)
		}
	}
}

// The rootless driver: nsexec's USERMAP_PLS is answered by the IDMapper
// (newuidmap/newgidmap for a caller without root), then USERMAP_ACK; a
// failed map is the error, with no ACK.
func TestRootlessDriver(t *testing.T) {
	mapErr := errors.New("newuidmap 99 0 100000 65536: exit status 1: newuidmap: write to uid_map failed: Operation not permitted")
	for _, tc := range []struct {
		name    string
		mapErr  error
		script  func(p *peer)
		wantErr string
	}{
		{"maps written, then ACK", nil, func(p *peer) {
			p.askMaps(99)
			p.expect(bootstrap.SyncUsermapAck)
			p.send(bootstrap.SyncPid, bootstrap.PidPayload(43))
			p.send(bootstrap.SyncReady, nil)
		}, ""},
		{"the maps fail: no ACK", mapErr, func(p *peer) {
			p.askMaps(99)
		}, mapErr.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeMapper{err: tc.mapErr}
			r := &Request{Config: testConfig(), Steps: ExecSteps{testConfig()}, Cgroups: movedIn(nil), Maps: m}
			_, err, _ := converseWith(t, r, 7, true, tc.script)
			checkErr(t, err, tc.wantErr)
			if !slices.Equal(m.pids, []int{99}) {
				t.Errorf("maps written for %v, want [99]", m.pids)
			}
		})
	}
}

// askMaps plays an exec's nsexec up to USERMAP_PLS for pid.
func (p *peer) askMaps(pid int) {
	p.readBootstrap()
	p.expect(bootstrap.SyncPlan)
	p.send(bootstrap.SyncHello, nil)
	p.expect(bootstrap.SyncGo)
	p.send(bootstrap.SyncUsermapPls, bootstrap.PidPayload(pid))
}

type fakeMapper struct {
	pids []int
	err  error
}

func (m *fakeMapper) Write(pid int) error {
	m.pids = append(m.pids, pid)
	return m.err
}
