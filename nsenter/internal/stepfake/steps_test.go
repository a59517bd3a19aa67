package stepfake

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/nsenter/internal/steptable"
)

const (
	newListener = 1 << 3 // SECCOMP_FILTER_FLAG_NEW_LISTENER
	allCaps     = 1<<41 - 1
	passwd      = "root:x:0:0:root:/root:/bin/sh\nu:x:1000:1000::/home/u:/bin/sh\n"
)

// kind is one sort of launch: a plan as launch/plan.go makes it, init or
// exec, the fake's answers, and the steps (by their rows in husk_steps)
// it must run.
type kind struct {
	name  string
	plan  func() *bootstrap.Plan
	forks bool
	k     Kernel
	// failFirst: the first call of that name fails with failErrno
	// (a case the launcher goes on from).
	failFirst string
	failErrno syscall.Errno
	steps     []string
	// want: these calls, in this order (others between).
	want []string
}

func filter() []byte { return make([]byte, 8*4) }

func rootPlan() *bootstrap.Plan {
	return &bootstrap.Plan{
		Args: []string{"/bin/sh", "-c", "true"}, Env: []string{"PATH=/bin"}, Cwd: "/srv", Umask: 0o022,
		Rlimits:    []bootstrap.PlanRlimit{{Type: 7, Soft: 1024, Hard: 4096}},
		Caps:       bootstrap.PlanCaps{Bounding: allCaps, Effective: allCaps, Permitted: allCaps, LastCap: 40},
		NoNewPrivs: true, Keyring: true, Seccomp: filter(),
	}
}

func userPlan() *bootstrap.Plan {
	const caps = 1<<5 | 1<<10 // CAP_KILL, CAP_NET_BIND_SERVICE
	return &bootstrap.Plan{
		Args: []string{"sh"}, Env: []string{"PATH=/usr/bin:/bin", "HOME="}, FillHome: true, Cwd: "/home/u",
		UID: 1000, GID: 1000, Groups: []uint32{5, 6},
		Caps:  bootstrap.PlanCaps{Bounding: caps, Effective: caps, Permitted: caps, Inheritable: caps, Ambient: 1 << 10, LastCap: 40},
		Sched: &bootstrap.PlanSched{Policy: 2, Priority: 5},
	}
}

func kinds() []kind {
	base := Kernel{FailAt: -1, Exe: "/bin/sh", Getcwd: "/srv"}
	user := Kernel{FailAt: -1, Exe: "/bin/sh", Getcwd: "/home/u", Passwd: ptr(passwd)}
	return []kind{{
		name: "init as root", plan: rootPlan, k: base,
		steps: []string{"session/is_init", "attributes", "cwd", "credentials", "path", "filter/filter_late", "exec"},
		want: []string{"setsid()", "setrlimit(7, 1024, 4096)", "umask(0022)", "keyctl(1, 0)",
			"openat2(100, /srv, resolve 0x12)", "fchdir(200)", "getcwd()", "prctl(PR_SET_KEEPCAPS, 1)",
			"setgroups([])", "setresgid(0, 0, 0)", "setresuid(0, 0, 0)",
			"capset(effective 0x1ffffffffff, permitted 0x1ffffffffff, inheritable 0x0)",
			"prctl(PR_SET_NO_NEW_PRIVS, 1)", "stat(/bin/sh)", "seccomp(1, 0x0, 4 instructions)",
			"execve(/bin/sh, [/bin/sh -c true])"},
	}, {
		name: "init as a user with additional gids and a scheduler", plan: userPlan, k: user,
		steps: []string{"session/is_init", "attributes", "scheduler", "cwd", "credentials", "home", "path", "exec"},
		want: []string{"sched_setattr(policy 2, priority 5, nice 0, flags 0x0, runtime 0)",
			"openat2(100, /home/u, resolve 0x12)", "prctl(PR_CAPBSET_DROP, 0)", "prctl(PR_SET_KEEPCAPS, 1)",
			"fchown(0, 1000)", "fchown(2, 1000)", "setgroups([5 6])", "setresgid(1000, 1000, 1000)",
			"setresuid(1000, 1000, 1000)", "prctl(PR_SET_KEEPCAPS, 0)",
			"capset(effective 0x420, permitted 0x420, inheritable 0x420)", "prctl(PR_CAP_AMBIENT_RAISE, 10)",
			"open(/etc/passwd)", "stat(/usr/bin/sh)", "stat(/bin/sh)", "faccessat2(/bin/sh)", "execve(/bin/sh, [sh])"},
	}, {
		name: "init as a user whose cwd only the user may enter", plan: userPlan, k: user,
		failFirst: "openat2", failErrno: syscall.EACCES,
		steps: []string{"session/is_init", "attributes", "scheduler", "cwd", "credentials", "cwd-as-user", "home", "path", "exec"},
		want:  []string{"openat2(100, /home/u, resolve 0x12)", "setresuid(1000, 1000, 1000)", "openat2(100, /home/u, resolve 0x12)", "fchdir(200)", "getcwd()"},
	}, {
		name: "init with labels", plan: func() *bootstrap.Plan {
			p := rootPlan()
			p.AppArmor, p.SELinux = "husk-default", "system_u:system_r:container_t:s0"
			return p
		}, k: base,
		steps: []string{"session/is_init", "attributes", "labels", "cwd", "credentials", "path", "filter/filter_late", "exec"},
		want: []string{"open(/proc/self/attr/apparmor/exec)", "open(/proc/self/attr/exec)", "access(/proc/self/attr/keycreate)",
			"open(/proc/self/attr/keycreate)", "write(100, system_u:system_r:container_t:s0)", "keyctl(1, 0)",
			"write(100, exec husk-default)", "write(100, system_u:system_r:container_t:s0)"},
	}, {
		name: "init with no_new_privs and a listener", plan: func() *bootstrap.Plan {
			p := rootPlan()
			p.SeccompFlags = newListener
			p.Listener = &bootstrap.PlanListener{Msg: []byte(`{"pid":}`), PidAt: []uint32{7}}
			return p
		}, k: base,
		steps: []string{"session/is_init", "attributes", "listener-room", "cwd", "credentials", "path", "filter/filter_late", "listener/listener_late", "exec"},
		want:  []string{"prctl(PR_SET_NO_NEW_PRIVS, 1)", "seccomp(1, 0x8, 4 instructions)", `sendmsg(8, fd 300, {"pid":1234})`, "close(300)", "close(8)", "execve(/bin/sh, [/bin/sh -c true])"},
	}, {
		name: "init finishing its root: read-only /dev and /, read-only and masked paths", plan: func() *bootstrap.Plan {
			p := rootPlan()
			p.Rootfs = &bootstrap.PlanRootfs{Masked: []string{"/proc/kcore", "/proc/acpi", "/proc/kcore", "/proc/timer_list", "/proc/scsi"},
				Readonly: []string{"/proc/sys"}, MountLabel: "system_u:object_r:container_file_t:s0",
				ReadonlyDev: `mounts[1]: error mounting "tmpfs" to rootfs at "/dev"`, ReadonlyRoot: true}
			p.System = systemPlan()
			return p
		}, k: Kernel{FailAt: -1, Exe: "/bin/sh", Getcwd: "/srv", Dirs: "/proc:/proc/acpi:/proc/sys:/proc/scsi"},
		steps: []string{"readonly-dev", "readonly-root", "hostname", "domainname", "sysctls", "readonly-paths", "masked-paths", "session/is_init", "attributes", "cwd", "credentials", "path", "filter/filter_late", "exec"},
		want: []string{"openat2(-100, /dev, resolve 0x4)", "mount_setattr(200, 0x1)", "close(200)",
			"openat2(-100, /, resolve 0x4)", "mount_setattr(200, 0x1)",
			"sethostname(box)", "setdomainname(example.org)",
			// 0xd: RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS, RESOLVE_NO_XDEV.
			"openat2(-100, /proc, resolve 0x4)", "fstatfs(202)", "openat2(202, sys/kernel/shmmax, resolve 0xd)", "fstatfs(200)",
			"write(200, 4096)", "close(200)", "openat2(202, sys/net/ipv4/ip_forward, resolve 0xd)", "write(200, 1)", "close(200)", "close(202)",
			"openat2(-100, /proc/sys, resolve 0x4)", "fstatfs(202)", "open_tree(202, recursive)", "mount_setattr(210, 0x1, recursive)", "move_mount(210, 202)",
			// The container's /dev/null is no 1:3 device here: the host's masks files.
			"openat2(-100, /dev/null, resolve 0x4)", "fstat(200)", "close(200)",
			"openat2(-100, /proc/kcore, resolve 0x4)", "fstatfs(200)", "move_mount(302, 200)",
			"openat2(-100, /proc/acpi, resolve 0x4)", "fsopen(tmpfs)", "fsconfig(220, source=tmpfs)",
			"fsconfig(220, context=system_u:object_r:container_file_t:s0)", "fsconfig(220, create)", "fsmount(220, 0x1)", "close(220)", "move_mount(221, 202)",
			"openat2(-100, /proc/timer_list, resolve 0x4)", "open_tree(302)", "move_mount(210, 200)",
			"openat2(-100, /proc/scsi, resolve 0x4)", "open_tree(221)", "move_mount(210, 202)", "close(302)", "close(221)",
			"setsid()", "execve(/bin/sh, [/bin/sh -c true])"},
	}, {
		name: "init with a console", plan: consolePlan, k: user,
		steps: []string{"console", "session/is_init", "attributes", "cwd", "credentials", "path", "exec"},
		want: []string{"open(/dev/ptmx)", "ioctl(100, TIOCGPTPEER)", "ioctl(100, TIOCSWINSZ, 24x80)", "fchown(301, 1000)",
			"sendmsg(7, fd 100, /dev/ptmx)", "openat2(-100, /dev/console, resolve 0x4)", "fstat(200)", "open_tree(301)",
			"move_mount(210, 200)", "close(210)", "close(200)", "dup2(301, 0)", "dup2(301, 2)", "close(301)", "close(7)",
			"setsid()", "ioctl(0, TIOCSCTTY)", "setresuid(1000, 1000, 1000)"},
	}, {
		name: "init with a console on a devpts of another namespace", plan: consolePlan, k: user,
		failFirst: "open_tree", failErrno: syscall.EINVAL,
		steps: []string{"console", "session/is_init", "attributes", "cwd", "credentials", "path", "exec"},
		want:  []string{"open_tree(301)", "mount_bind(/proc/self/fd/301, /proc/self/fd/200)", "close(200)", "dup2(301, 0)"},
	}, {
		name: "init with a console and no /dev/console", plan: consolePlan, k: user,
		failFirst: "openat2", failErrno: syscall.ENOENT,
		steps: []string{"console", "session/is_init", "attributes", "cwd", "credentials", "path", "exec"},
		want: []string{"openat2(-100, /dev/console, resolve 0x4)", "openat2(-100, /dev/console, resolve 0x4)", "close(200)",
			"openat2(-100, /dev/console, resolve 0x4)", "fstat(200)", "open_tree(301)", "move_mount(210, 200)"},
	}, {
		name: "exec", plan: rootPlan, forks: true, k: base,
		steps: []string{"attributes", "cwd", "credentials", "path", "filter/filter_late", "fork/forks_late", "session/forks_late", "exec"},
		want:  []string{"seccomp(1, 0x0, 4 instructions)", "fork()", "setsid()", "execve(/bin/sh, [/bin/sh -c true])"},
	}, {
		name: "exec without no_new_privs, with a seccomp listener", plan: func() *bootstrap.Plan {
			p := rootPlan()
			p.NoNewPrivs, p.SeccompFlags = false, newListener
			p.Listener = &bootstrap.PlanListener{Msg: []byte(`{"pid":}`), PidAt: []uint32{7}}
			return p
		}, forks: true, k: base,
		steps: []string{"attributes", "fork/forks_early", "session/forks_early", "listener-room", "filter/filter_early", "listener/listener_early", "cwd", "credentials", "path", "exec"},
		want:  []string{"fork()", "setsid()", "seccomp(1, 0x8, 4 instructions)", `sendmsg(8, fd 300, {"pid":4242})`, "close(300)", "close(8)", "openat2(100, /srv, resolve 0x12)", "setresuid(0, 0, 0)"},
	}, {
		name: "exec with SCHED_DEADLINE", plan: func() *bootstrap.Plan {
			p := rootPlan()
			p.Sched = &bootstrap.PlanSched{Policy: 6, Runtime: 10, Deadline: 20, Period: 30}
			return p
		}, forks: true, k: base,
		steps: []string{"attributes", "fork/forks_early", "session/forks_early", "scheduler", "cwd", "credentials", "path", "filter/filter_late", "exec"},
		want:  []string{"fork()", "setsid()", "sched_setattr(policy 6, priority 0, nice 0, flags 0x0, runtime 10)", "seccomp(1, 0x0, 4 instructions)"},
	}, {
		name: "exec with a terminal", plan: func() *bootstrap.Plan {
			p := userPlan()
			p.Sched, p.FillHome, p.Env = nil, false, []string{"PATH=/bin"}
			p.TTY = &bootstrap.PlanTTY{Open: true, HasSize: true, Rows: 24, Cols: 80}
			return p
		}, forks: true, k: user,
		steps: []string{"pty", "attributes", "cwd", "credentials", "path", "fork/forks_late", "session/forks_late", "exec"},
		want: []string{"open(/dev/ptmx)", "ioctl(100, TIOCSPTLCK)", "ioctl(100, TIOCGPTPEER)", "ioctl(100, TIOCSWINSZ, 24x80)",
			"tcsetattr(301, onlcr 0)", "fchown(301, 1000)", "sendmsg(7, fd 100, /dev/ptmx)", "dup2(301, 0)", "dup2(301, 2)",
			"close(301)", "close(7)", "setresuid(1000, 1000, 1000)", "fork()", "setsid()", "ioctl(0, TIOCSCTTY)"},
	}, {
		name: "exec with every attribute", plan: func() *bootstrap.Plan {
			p := rootPlan()
			pers := uint32(8)
			p.Affinity, p.Personality = []uint64{0x3}, &pers
			p.MemPolicy = &bootstrap.PlanMemPolicy{Mode: 2, Nodes: []uint64{1}}
			p.IOPrio = &bootstrap.PlanIOPrio{Class: 2, Priority: 6}
			return p
		}, forks: true, k: base,
		steps: []string{"attributes", "cwd", "credentials", "path", "filter/filter_late", "fork/forks_late", "session/forks_late", "exec"},
		want: []string{"setrlimit(7, 1024, 4096)", "umask(0022)", "keyctl(1, 0)", "set_mempolicy(2, 65)",
			"personality(0x8)", "ioprio_set(1, 0, 16390)", "sched_setaffinity(0x3)"},
	}}
}

func ptr[T any](v T) *T { return &v }

// consolePlan is a container's init with a terminal and a mount
// namespace of its own: its pid 1 makes the console.
func consolePlan() *bootstrap.Plan {
	p := userPlan()
	p.Sched, p.FillHome, p.Env = nil, false, []string{"PATH=/bin"}
	p.TTY = &bootstrap.PlanTTY{Open: true, HasSize: true, Rows: 24, Cols: 80}
	p.Rootfs = &bootstrap.PlanRootfs{}
	return p
}

func systemPlan() *bootstrap.PlanSystem {
	return &bootstrap.PlanSystem{Hostname: "box", Domainname: "example.org",
		Sysctls: []bootstrap.PlanSysctl{{Key: "kernel.shmmax", Value: "4096"}, {Key: "net.ipv4.ip_forward", Value: "1"}}}
}

// rows maps the names a kind uses to rows of husk_steps: a step's name,
// or, for a name the table has more than once, "name/applies" (the
// function that says when it applies, as in launch.c's table, which must
// be the table the fake ran).
func rows(t *testing.T) map[string]int {
	t.Helper()
	table, err := steptable.Read("../../launch.c")
	if err != nil {
		t.Fatal(err)
	}
	names := Steps()
	count := map[string]int{}
	for i, r := range table {
		if i >= len(names) || r.Name != names[i] {
			t.Fatalf("launch.c: husk_steps row %d, %+v, is not that of the table built (%q)", i, r, names)
		}
		count[r.Name]++
	}
	if len(table) != len(names) {
		t.Fatalf("launch.c has %d husk_steps rows, the table built %d", len(table), len(names))
	}
	m := map[string]int{}
	for i, name := range names {
		if count[name] > 1 {
			name += "/" + table[i].Applies
		}
		m[name] = i
	}
	return m
}

// calls each step may make: a step that makes another call, or a call
// made by the wrong step, fails the test. The launch's open (the LSM
// attribute files) runs before the steps: step -1.
var stepCalls = map[string][]string{
	"(open)":         {"open", "fstatfs", "close", "access"},
	"readonly-dev":   {"openat2", "fstat", "fstatfs", "stat", "mount_setattr", "close"},
	"readonly-root":  {"openat2", "fstat", "fstatfs", "stat", "mount_setattr", "close"},
	"console":        {"open", "ioctl", "fstatfs", "fstat", "tcgetattr", "tcsetattr", "fchown", "sendmsg", "close", "openat2", "open_tree", "move_mount", "mount_bind", "dup2"},
	"hostname":       {"sethostname"},
	"domainname":     {"setdomainname"},
	"sysctls":        {"openat2", "fstatfs", "write", "close"},
	"readonly-paths": {"openat2", "fstat", "fstatfs", "stat", "open_tree", "mount_setattr", "move_mount", "close"},
	"masked-paths":   {"openat2", "fstat", "fstatfs", "stat", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "close"},
	"pty":            {"open", "ioctl", "fstatfs", "fstat", "tcgetattr", "tcsetattr", "fchown", "sendmsg", "close", "dup2"},
	"session":        {"setsid", "ioctl"},
	"attributes":     {"setrlimit", "umask", "write", "close", "keyctl", "set_mempolicy", "personality", "ioprio_set", "sched_setaffinity"},
	"fork":           {"fork"},
	"scheduler":      {"sched_setattr"},
	"labels":         {"write", "close"},
	"listener-room":  {},
	"filter":         {"seccomp"},
	"listener":       {"sendmsg", "close"},
	"cwd":            {"open", "openat2", "close", "fchdir", "chdir", "getcwd"},
	"credentials":    {"prctl", "stat", "fstat", "fchown", "setgroups", "setresgid", "setresuid", "capset"},
	"cwd-as-user":    {"open", "openat2", "close", "fchdir", "chdir", "getcwd"},
	"home":           {"open", "fstat", "read", "close"},
	"path":           {"stat", "faccessat2"},
	"exec":           {"execve"},
}

// What a failed call in each step may report: the config field (or the
// call) the error names.
var stepErrors = map[string][]string{
	"(open)":         {"process.apparmorProfile: ", "process.selinuxLabel: "},
	"readonly-dev":   {`mounts[1]: error mounting "tmpfs" to rootfs at "/dev": make it read-only: `},
	"readonly-root":  {"root.readonly: remount / read-only: "},
	"console":        {"process.terminal: ", "process.consoleSize: "},
	"hostname":       {`hostname: sethostname "box": `},
	"domainname":     {`domainname: setdomainname "example.org": `},
	"sysctls":        {`linux.sysctl["kernel.shmmax"]: write "4096": `, `linux.sysctl["net.ipv4.ip_forward"]: write "1": `},
	"readonly-paths": {`readonlyPaths[0] "/proc/sys": `},
	"masked-paths":   {"maskedPaths["},
	"pty":            {"process.terminal: ", "process.consoleSize: "},
	"session":        {"setsid: ", "process.terminal: "},
	"attributes":     {"process.rlimits[", "process.selinuxLabel ", "join a new session keyring: ", "linux.memoryPolicy: ", "linux.personality: ", "process.ioPriority: ", "process.execCPUAffinity.final: "},
	"scheduler":      {"process.scheduler: "},
	"labels":         {"process.apparmorProfile ", "process.selinuxLabel "},
	"filter":         {"linux.seccomp: "},
	"listener":       {"linux.seccomp.listenerPath: "},
	"cwd":            {"process.cwd: "},
	"credentials":    {"process.capabilities", "process.user.", "prctl(PR_SET_KEEPCAPS", "process.noNewPrivileges: "},
	"cwd-as-user":    {"process.cwd: "},
	"home":           {"process.user: /etc/passwd: "},
	"path":           {"exec: "},
	"exec":           {"exec \""},
}

func stepName(i int) string {
	if i < 0 {
		return "(open)"
	}
	return Steps()[i]
}

func launch(t *testing.T, kd kind) *Run {
	t.Helper()
	k := kd.k
	if kd.failFirst != "" {
		r, err := Launch(kd.plan(), kd.forks, k)
		if err != nil {
			t.Fatal(err)
		}
		k.FailAt = slices.IndexFunc(countable(r.Calls), func(c Call) bool { return c.Name == kd.failFirst })
		if k.FailAt < 0 {
			t.Fatalf("no %s call to fail", kd.failFirst)
		}
		k.Errno = kd.failErrno
	}
	r, err := Launch(kd.plan(), kd.forks, k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// countable leaves out the fork, which the fake never fails: the rest
// are numbered as Kernel.FailAt counts them.
func countable(calls []Call) []Call {
	return slices.DeleteFunc(slices.Clone(calls), func(c Call) bool { return c.Name == "fork" })
}

func texts(calls []Call) []string {
	var s []string
	for _, c := range calls {
		s = append(s, c.Text)
	}
	return s
}

// TestStepsRunInTableOrder: each kind runs the steps it should, in
// husk_steps' order, each making only its own calls, and the calls the
// plan asks for, with its values, in order.
func TestStepsRunInTableOrder(t *testing.T) {
	row := rows(t)
	ran := map[int]bool{}
	for _, kd := range kinds() {
		t.Run(kd.name, func(t *testing.T) {
			r := launch(t, kd)
			if r.Err != nil {
				t.Fatalf("launch failed: %v\ncalls: %q", r.Err, texts(r.Calls))
			}
			var want []int
			for _, s := range kd.steps {
				i, ok := row[s]
				if !ok {
					t.Fatalf("no step %q in husk_steps %q", s, Steps())
				}
				want = append(want, i)
			}
			if !slices.Equal(r.Steps, want) {
				t.Errorf("steps run %v, want %v (%q)", r.Steps, want, kd.steps)
			}
			for _, i := range r.Steps {
				ran[i] = true
			}
			last := -1
			for _, c := range r.Calls {
				if c.Step < last {
					t.Errorf("%s in step %d after step %d", c.Text, c.Step, last)
				}
				last = c.Step
				if !slices.Contains(stepCalls[stepName(c.Step)], c.Name) {
					t.Errorf("step %d (%s) made %s, not one of its calls %q", c.Step, stepName(c.Step), c.Text, stepCalls[stepName(c.Step)])
				}
			}
			if err := inOrder(texts(r.Calls), kd.want); err != nil {
				t.Errorf("%v\ncalls: %q", err, texts(r.Calls))
			}
		})
	}
	for i, name := range Steps() {
		if !ran[i] {
			t.Errorf("no kind runs step %d (%s): add one", i, name)
		}
		if _, ok := stepCalls[name]; !ok {
			t.Errorf("step %s: no entry in stepCalls", name)
		}
	}
}

// inOrder: want's calls are in got, in that order.
func inOrder(got, want []string) error {
	at := 0
	for _, w := range want {
		i := slices.Index(got[at:], w)
		if i < 0 {
			if slices.Contains(got, w) {
				return fmt.Errorf("%s is out of order (wanted after %q)", w, got[max(at-1, 0)])
			}
			return fmt.Errorf("no call %s", w)
		}
		at += i + 1
	}
	return nil
}

// tolerated are the calls whose failure the launcher goes on from, as
// runc does: closes, the keycreate file's probe, an ambient capability
// the kernel refuses (a warning), a missing /etc/passwd (HOME=/), a
// PATH directory without the file, AppArmor's own attribute file
// (kernels before 5.1 have only the shared one).
func tolerated(calls []Call, n int, exe string) bool {
	c := calls[n]
	switch {
	case c.Text == "open(/proc/self/attr/apparmor/exec)",
		c.Name == "fstatfs" && n > 0 && calls[n-1].Text == "open(/proc/self/attr/apparmor/exec)":
		return true
	case c.Name == "close", c.Name == "access", c.Name == "umask":
		return true
	case strings.HasPrefix(c.Text, "prctl(PR_CAP_AMBIENT_RAISE"), c.Text == "open(/etc/passwd)":
		return true
	// The container's /dev/null, which masks files when it is a 1:3
	// device: unreachable or not one, the host's masks them.
	case strings.HasPrefix(c.Text, "openat2(-100, /dev/null,"),
		c.Name == "fstat" && n > 0 && strings.HasPrefix(calls[n-1].Text, "openat2(-100, /dev/null,"):
		return true
	case c.Name == "stat" && c.Text != "stat(/dev/null)" && c.Text != "stat("+exe+")":
		return true
	}
	return false
}

// withoutErrno: the launcher's errors that say what is wrong, not the
// call's errno: a file on the wrong filesystem, a PATH search (runc's
// words).
func withoutErrno(msg string) bool {
	for _, s := range []string{"is not on a procfs", "is not a devpts terminal", "executable file not found in $PATH"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// TestEveryFailedCallStopsItsStep fails each call of each kind in turn:
// the launch stops in the step that made it, with an error naming that
// step's field and the errno, and runs no later step; or, for a call the
// launcher tolerates, goes on.
func TestEveryFailedCallStopsItsStep(t *testing.T) {
	const errno = syscall.EIO
	for _, kd := range kinds() {
		t.Run(kd.name, func(t *testing.T) {
			full := countable(launch(t, kd).Calls)
			if kd.failFirst != "" {
				return // its calls are those of a kind without it, but for one
			}
			for n, c := range full {
				k := kd.k
				k.FailAt, k.Errno = n, errno
				r, err := Launch(kd.plan(), kd.forks, k)
				if err != nil {
					t.Fatal(err)
				}
				if r.Err == nil {
					if !tolerated(full, n, kd.k.Exe) {
						t.Errorf("call %d, %s (step %s), failed: the launch went on to execve", n, c.Text, stepName(c.Step))
					}
					continue
				}
				msg := r.Err.Error()
				if !slices.ContainsFunc(stepErrors[stepName(c.Step)], func(p string) bool { return strings.HasPrefix(msg, p) }) {
					t.Errorf("call %d, %s (step %s), failed: error %q names none of %q", n, c.Text, stepName(c.Step), msg, stepErrors[stepName(c.Step)])
				}
				if !strings.Contains(msg, errno.Error()) && !withoutErrno(msg) {
					t.Errorf("call %d, %s, failed: error %q does not say %q", n, c.Text, msg, errno.Error())
				}
				if len(r.Steps) > 0 && r.Steps[len(r.Steps)-1] != c.Step {
					t.Errorf("call %d, %s (step %d), failed: step %d ran after it", n, c.Text, c.Step, r.Steps[len(r.Steps)-1])
				}
				if got := countable(r.Calls); len(got) <= n || got[n].Text != c.Text {
					t.Errorf("call %d: not %s when it failed", n, c.Text)
				}
			}
		})
	}
}

// The cwd is checked after it is entered: a path that resolved outside
// the container's root (getcwd says "(unreachable)") stops the launch
// before the credentials, and so does a /proc magic link.
func TestCwdOutsideRootStopsLaunch(t *testing.T) {
	row := rows(t)
	for _, tc := range []struct {
		name  string
		k     func(Kernel) Kernel
		wants string
	}{
		{"getcwd outside the root", func(k Kernel) Kernel { k.Getcwd = "(unreachable)/"; return k },
			"process.cwd: chdir \"/srv\": current working directory is outside of container mount namespace root -- possible container breakout detected"},
		{"a magic link", func(k Kernel) Kernel { k.FailAt, k.Errno = 0, syscall.ELOOP; return k },
			"process.cwd: chdir \"/srv\": too many levels of symbolic links (or a /proc magic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.k(Kernel{FailAt: -1, Exe: "/bin/sh", Getcwd: "/srv"})
			if k.FailAt == 0 { // the first openat2
				r, err := Launch(rootPlan(), true, Kernel{FailAt: -1, Exe: "/bin/sh", Getcwd: "/srv"})
				if err != nil {
					t.Fatal(err)
				}
				k.FailAt = slices.IndexFunc(countable(r.Calls), func(c Call) bool { return c.Name == "openat2" })
			}
			r, err := Launch(rootPlan(), true, k)
			if err != nil {
				t.Fatal(err)
			}
			if r.Err == nil || !strings.HasPrefix(r.Err.Error(), tc.wants) {
				t.Fatalf("error %v, want %q", r.Err, tc.wants)
			}
			if last := r.Steps[len(r.Steps)-1]; last != row["cwd"] {
				t.Errorf("the launch went on to step %d (%s)", last, stepName(last))
			}
			for _, c := range r.Calls {
				if c.Name == "setresuid" || c.Name == "execve" {
					t.Errorf("%s after the cwd failed", c.Text)
				}
			}
		})
	}
}

// Every call in struct husk_kernel is in the real kernel and in the fake.
func TestKernelsComplete(t *testing.T) {
	for _, real := range []bool{true, false} {
		if n := Missing(real); n != 0 {
			t.Errorf("real %v: %d calls of struct husk_kernel are NULL", real, n)
		}
	}
}

// A sysctl's file that is not on procfs (something bound over it) is
// refused, never written; so is a /proc that is not a procfs.
func TestSysctlOffProcfsIsRefused(t *testing.T) {
	plan := func() *bootstrap.Plan {
		p := rootPlan()
		p.System = systemPlan()
		return p
	}
	for _, tc := range []struct {
		dirs, want string
	}{
		{"/proc", `linux.sysctl["kernel.shmmax"]: write "4096": /proc/sys/kernel/shmmax: not on procfs (filesystem magic 0x1021994)`},
		{"", `linux.sysctl["kernel.shmmax"]: write "4096": /proc: not on procfs (filesystem magic 0x1021994)`},
	} {
		r, err := Launch(plan(), false, Kernel{FailAt: -1, Exe: "/bin/sh", Getcwd: "/srv", Dirs: tc.dirs, NotProcfs: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Err == nil || r.Err.Error() != tc.want {
			t.Errorf("error %v, want %q", r.Err, tc.want)
		}
		for _, c := range r.Calls {
			if c.Name == "write" {
				t.Errorf("%s: written", c.Text)
			}
		}
	}
}
