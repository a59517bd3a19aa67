package launch

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func config(p *configs.Process) *configs.Config {
	if p.Cwd == "" {
		p.Cwd = "/"
	}
	if p.Args == nil {
		p.Args = []string{"true"}
	}
	return &configs.Config{Process: p}
}

// The environment as runc makes it: the last value of a key, in the
// place of that last one, once; an empty or missing HOME is filled by
// the launcher from the container's /etc/passwd.
func TestPlanEnv(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
		fill     bool
	}{
		{[]string{"A=1", "B=2", "A=3"}, []string{"B=2", "A=3", "HOME="}, true},
		{[]string{"HOME=", "PATH=/bin"}, []string{"HOME=", "PATH=/bin"}, true},
		{[]string{"HOME=/x", "HOME="}, []string{"HOME="}, true},
		{[]string{"HOME=", "HOME=/y"}, []string{"HOME=/y"}, false},
		{nil, []string{"HOME="}, true},
	} {
		p, err := NewPlan(config(&configs.Process{Env: tc.in}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Env, tc.want) || p.FillHome != tc.fill {
			t.Errorf("env %q: %q fill %v, want %q fill %v", tc.in, p.Env, p.FillHome, tc.want, tc.fill)
		}
	}
	// A hook's own environment is exactly that.
	p, err := NewPlan(config(&configs.Process{Env: []string{"A=1", "A=2"}}), Options{ExactEnv: true, Path: "/bin/hook"})
	if err != nil || !slices.Equal(p.Env, []string{"A=1", "A=2"}) || p.FillHome || p.Path != "/bin/hook" {
		t.Errorf("exact env: %+v, %v", p, err)
	}
}

// The scheduler's record says whether the container has a cpuset limit:
// the launcher then words a refusal as runc does.
func TestPlanSchedCpuset(t *testing.T) {
	for _, cpus := range []string{"", "0"} {
		cfg := config(&configs.Process{Scheduler: &configs.Scheduler{Policy: unix.SCHED_DEADLINE}})
		cfg.Cgroup = &configs.Cgroup{Resources: configs.Resources{CpusetCpus: cpus}}
		p, err := NewPlan(cfg, Options{})
		if err != nil || p.Sched == nil || p.Sched.Cpuset != (cpus != "") {
			t.Errorf("cpus %q: plan %+v, %v", cpus, p.Sched, err)
		}
	}
}

// uid, gid and every additional gid outside 0-2147483647 are refused with
// runc's words, naming the field and the value.
func TestPlanIDs(t *testing.T) {
	for _, tc := range []struct {
		u    configs.User
		want string
	}{
		{configs.User{UID: 4294967295}, "process.user.uid: 4294967295: uids and gids must be in range 0-2147483647"},
		{configs.User{GID: 2147483648}, "process.user.gid: 2147483648: uids and gids must be in range 0-2147483647"},
		{configs.User{AdditionalGids: []uint32{5, 4294967294}}, "process.user.additionalGids[1]: 4294967294: uids and gids"},
	} {
		if _, err := NewPlan(config(&configs.Process{User: tc.u}), Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.u, err, tc.want)
		}
	}
	if _, err := NewPlan(config(&configs.Process{User: configs.User{UID: 2147483647, GID: 2147483647}}), Options{}); err != nil {
		t.Errorf("the largest id: %v", err)
	}
}

// What execve would refuse, or the launcher could not carry, is refused
// with the field's name; what execve takes passes, past any 16-bit length.
func TestPlanLimits(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &lim); err != nil {
		t.Fatal(err)
	}
	stack := func(n uint64) []configs.Rlimit {
		return []configs.Rlimit{{Type: unix.RLIMIT_STACK, Soft: n, Hard: n}}
	}
	big := strings.Repeat("a", 100<<10)
	many := func(n int) []string { return slices.Repeat([]string{"X=" + big}, n) }
	for _, tc := range []struct {
		name string
		p    *configs.Process
		want string // "" passes
	}{
		{"1 MiB of env, 8 MiB stack", &configs.Process{Env: many(10), Rlimits: stack(8 << 20)}, ""},
		{"2.3 MiB of env, 8 MiB stack", &configs.Process{Env: many(24), Rlimits: stack(8 << 20)},
			"process.env: 2.3 MiB of args and environment, over the 2 MiB execve allows"},
		{"2.3 MiB of env, 16 MiB stack", &configs.Process{Env: many(24), Rlimits: stack(16 << 20)}, ""},
		{"7 MiB, no stack limit", &configs.Process{Env: many(72), Rlimits: stack(unix.RLIM_INFINITY)},
			"over the 6 MiB execve allows"},
		{"args and env together", &configs.Process{Args: many(12), Env: many(12), Rlimits: stack(8 << 20)},
			"process.args and process.env: 2.3 MiB"},
		{"one string over 128 KiB", &configs.Process{Args: []string{"sh", strings.Repeat("a", 128<<10)}},
			"process.args[1]: 128 KiB, over the 128 KiB execve takes for one string (MAX_ARG_STRLEN)"},
		{"a NUL in env", &configs.Process{Env: []string{"A=\x00"}}, "process.env[0]: contains a NUL byte"},
		{"65537 groups", &configs.Process{User: configs.User{AdditionalGids: make([]uint32, 65537)}},
			"process.user.additionalGids: 65537 groups, over the 65536"},
		{"65536 groups", &configs.Process{User: configs.User{AdditionalGids: make([]uint32, 65536)}}, ""},
		{"cwd over PATH_MAX", &configs.Process{Cwd: "/" + strings.Repeat("d", 4096)}, "process.cwd: 4097 bytes, over the 4095"},
		{"label over a page", &configs.Process{AppArmorProfile: strings.Repeat("p", 4096)}, "process.apparmorProfile: 4096 bytes"},
		{"bad rlimit", &configs.Process{Rlimits: []configs.Rlimit{{Type: 16}}}, "process.rlimits: unknown resource 16"},
	} {
		plan, err := NewPlan(config(tc.p), Options{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "":
			if b, err := plan.Encode(); err != nil || len(b) > bootstrap.PlanMax {
				t.Errorf("%s: encode %d bytes, %v", tc.name, len(b), err)
			}
		case err == nil || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// The listener's message with holes where the launcher puts the pid of
// the process it launches: filled in, it is the message made with that
// pid (for a container's init, the state's pid too).
func TestListenerHoles(t *testing.T) {
	cfg := &configs.Config{Seccomp: &configs.Seccomp{ListenerPath: "/l", ListenerMetadata: "m",
		Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_NOTIFY"}}}}
	for _, tc := range []struct {
		statePid, holes, want int
	}{{77, 1, 77}, {ProcessPid, 2, 4242}} {
		l, err := Listener(cfg, specs.State{ID: "c", Pid: tc.statePid, Status: specs.StateRunning})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.PidAt) != tc.holes {
			t.Fatalf("%d holes in %s, want %d", len(l.PidAt), l.Msg, tc.holes)
		}
		var filled []byte
		from := 0
		for _, at := range l.PidAt {
			filled = append(append(filled, l.Msg[from:at]...), "4242"...)
			from = int(at)
		}
		filled = append(filled, l.Msg[from:]...)
		var m specs.ContainerProcessState
		if err := json.Unmarshal(filled, &m); err != nil || m.Pid != 4242 || m.State.Pid != tc.want || m.Metadata != "m" {
			t.Errorf("message %s: %+v, %v", filled, m, err)
		}
	}
	if none, err := Listener(&configs.Config{}, specs.State{}); none != nil || err != nil {
		t.Errorf("no listener: %+v, %v", none, err)
	}
}

func TestMask(t *testing.T) {
	got, err := Mask("f", []int{0, 2, 64, 130})
	if err != nil || !slices.Equal(got, []uint64{5, 1, 4}) {
		t.Errorf("mask %#x, %v", got, err)
	}
	if _, err := Mask("process.execCPUAffinity.final", []int{8192}); err == nil ||
		!strings.Contains(err.Error(), "process.execCPUAffinity.final: 8192 is out of range 0-8191") {
		t.Errorf("out of range: %v", err)
	}
}
