package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

var state = specs.State{Version: specs.Version, ID: "c1", Status: specs.StateCreating, Pid: 42, Bundle: "/b"}

// sh is a hook running script with /bin/sh.
func sh(script string) configs.Hook {
	return configs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c", script}}
}

func TestStateOnStdinArgsAndEnv(t *testing.T) {
	dir := t.TempDir()
	h := sh(`cat > "$1/state"; echo "$0 $2 $FOO" > "$1/args"`)
	h.Args = append(h.Args, "hook-name", dir, "second")
	h.Env = []string{"FOO=bar"}
	if err := Run(configs.CreateRuntime, []configs.Hook{h}, state, InheritEnv); err != nil {
		t.Fatal(err)
	}
	var got specs.State
	data, _ := os.ReadFile(filepath.Join(dir, "state"))
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("state %q: %v", data, err)
	}
	if got.ID != "c1" || got.Pid != 42 || got.Status != specs.StateCreating || got.Bundle != "/b" {
		t.Errorf("state on stdin: %+v", got)
	}
	if args, _ := os.ReadFile(filepath.Join(dir, "args")); string(args) != "hook-name second bar\n" {
		t.Errorf("args and env: %q", args)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("HUSK_HOOK_TEST", "inherited")
	dir := t.TempDir()
	h := sh(`echo "[$HUSK_HOOK_TEST]" > ` + dir + `/env`)
	for _, tc := range []struct {
		env  Env
		want string
	}{{InheritEnv, "[inherited]\n"}, {EmptyEnv, "[]\n"}} {
		if err := Run(configs.Poststop, []configs.Hook{h}, state, tc.env); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(dir + "/env"); string(got) != tc.want {
			t.Errorf("env %+v: hook saw %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestNoArgsRunsPath(t *testing.T) {
	if err := Run(configs.Poststart, []configs.Hook{{Path: "/bin/true"}}, state, EmptyEnv); err != nil {
		t.Fatal(err)
	}
}

func TestFailureNamesHookAndShowsOutput(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	hooks := []configs.Hook{{Path: "/bin/true"}, sh("echo oops >&2; exit 3"), sh("touch " + ran)}
	err := Run(configs.CreateContainer, hooks, state, EmptyEnv)
	want := `hooks.createContainer[1]: error running createContainer hook #1: "/bin/sh": exit status 3: oops`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the hook after the failed one ran")
	}
}

func TestMissingBinary(t *testing.T) {
	err := Run(configs.Prestart, []configs.Hook{{Path: "/nonexistent/hook"}}, state, EmptyEnv)
	if err == nil || !strings.Contains(err.Error(), `hooks.prestart[0]: error running prestart hook #0: "/nonexistent/hook"`) {
		t.Fatalf("error %v", err)
	}
}

// A timeout kills the hook and everything it started, and fails.
func TestTimeoutKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := sh("sleep 60 & echo $! > " + pidFile + "; echo started; wait")
	h.Timeout = 1
	start := time.Now()
	err := Run(configs.CreateRuntime, []configs.Hook{h}, state, EmptyEnv)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Run took %v with a 1s timeout", took)
	}
	want := `hooks.createRuntime[0]: error running createRuntime hook #0: "/bin/sh": timed out after 1s: started`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid <= 0 {
		t.Fatalf("pid file %q", data)
	}
	for i := 0; i < 100; i++ {
		if unix.Kill(pid, 0) == unix.ESRCH {
			return
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil) // if it was reparented to us
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the hook's child %d survived the timeout", pid)
}

// A hook that does not read its stdin still succeeds.
func TestHookIgnoringStdin(t *testing.T) {
	big := state
	big.Annotations = map[string]string{"a": strings.Repeat("x", 1<<20)}
	if err := Run(configs.Poststart, []configs.Hook{{Path: "/bin/true"}}, big, EmptyEnv); err != nil {
		t.Fatal(err)
	}
}

func TestRunAllGoesOn(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	hooks := []configs.Hook{sh("exit 1"), sh("touch " + ran), sh("exit 2")}
	errs := RunAll(configs.Poststop, hooks, state, EmptyEnv)
	if len(errs) != 2 || !strings.HasPrefix(errs[0].Error(), "hooks.poststop[0]") || !strings.HasPrefix(errs[1].Error(), "hooks.poststop[2]") {
		t.Errorf("errors %v", errs)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Error("the hook after a failed one did not run")
	}
}

func TestWithEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	h := sh(`echo "[$A] $(pwd)" > out`)
	env := WithEnv([]string{"A=from-process"})
	env.Dir = dir
	if err := Run(configs.StartContainer, []configs.Hook{h}, state, env); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dir + "/out"); string(got) != "[from-process] "+dir+"\n" {
		t.Errorf("hook saw %q", got)
	}
}

// A hook gets stdio only, and the caller's fds keep their flags.
func TestHookSeesOnlyStdio(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// An fd without FD_CLOEXEC, as init's inherited ones are.
	fd, err := unix.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	dir := t.TempDir()
	if err := Run(configs.StartContainer, []configs.Hook{sh(`ls /proc/self/fd > ` + dir + `/fds`)}, state, EmptyEnv); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dir + "/fds")
	// 0, 1, 2 and the fd ls opened on /proc/self/fd.
	if fields := strings.Fields(string(got)); len(fields) != 4 || fields[0] != "0" || fields[1] != "1" || fields[2] != "2" {
		t.Errorf("the hook's fds: %q", fields)
	}
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Errorf("fd %d is close-on-exec after the hooks", fd)
	}
}
