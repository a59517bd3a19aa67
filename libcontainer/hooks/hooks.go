// Package hooks runs the OCI hooks of config.json: each hook is a program
// given the container's state as JSON on stdin, killed when its timeout
// passes. Where a hook runs (the runtime's namespaces or the container's)
// is the caller's choice: the parent runs prestart, createRuntime,
// poststart and poststop, the container's pid 1 runs createContainer
// (nsenter/hooks.c, with these semantics and words), and `start`
// launches each startContainer hook into the container (RunWith).
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// Env says what environment a hook without an env list gets, and in
// which directory it starts.
type Env struct {
	inherit bool
	vars    []string
	// Dir is the hook's working directory; empty: the caller's.
	Dir string
}

var (
	// InheritEnv gives it the caller's environment, as runc does for the
	// hooks it runs in the runtime namespace.
	InheritEnv = Env{inherit: true}
	// EmptyEnv gives it none: husk init's environment is its own
	// plumbing, never the hook's business.
	EmptyEnv = Env{}
)

// WithEnv gives it vars, e.g. the container process's environment, as
// runc gives startContainer hooks.
func WithEnv(vars []string) Env {
	return Env{vars: append([]string{}, vars...)}
}

// Run runs hooks one after the other with state on stdin and stops at the
// first failure, whose error names the hook with runc's phrase:
//
//	hooks.createRuntime[1]: error running createRuntime hook #1: "/bin/x": exit status 3: output
//
// A hook gets stdin, stdout and stderr, and no other fd of its caller's.
func Run(kind configs.HookKind, hooks []configs.Hook, state specs.State, env Env) error {
	return first(runHere(kind, hooks, state, env, true))
}

// RunAll runs every hook even when some fail, as the runtime-spec wants
// for poststop, and returns an error for each failure.
func RunAll(kind configs.HookKind, hooks []configs.Hook, state specs.State, env Env) []error {
	return runHere(kind, hooks, state, env, false)
}

// Runner runs hook h to its end, stdin given, stdout and stderr written
// to out, killed when its timeout passes; nil when it exited 0, else how
// it ended ("exit status 3", "signal: killed", "timed out after 2s").
type Runner func(h configs.Hook, stdin []byte, out io.Writer) error

// RunWith is Run with each hook run by runner (startContainer hooks run
// inside the container, launched like an exec).
func RunWith(kind configs.HookKind, hooks []configs.Hook, state specs.State, runner Runner) error {
	return first(run(kind, hooks, state, runner, true))
}

func first(errs []error) error {
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// runHere runs hooks as children of this process.
func runHere(kind configs.HookKind, hooks []configs.Hook, state specs.State, env Env, stop bool) []error {
	if len(hooks) == 0 {
		return nil
	}
	restore, err := onlyStdio()
	if err != nil {
		return []error{fmt.Errorf("hooks.%s: %w", kind, err)}
	}
	defer restore()
	return run(kind, hooks, state, func(h configs.Hook, stdin []byte, out io.Writer) error {
		return runOne(h, stdin, out, env)
	}, stop)
}

func run(kind configs.HookKind, hooks []configs.Hook, state specs.State, runner Runner, stop bool) []error {
	if len(hooks) == 0 {
		return nil
	}
	stdin, err := json.Marshal(state)
	if err != nil {
		return []error{fmt.Errorf("hooks.%s: encode the state: %w", kind, err)}
	}
	var errs []error
	for i, h := range hooks {
		logrus.Debugf("run %s hook #%d: %s %q", kind, i, h.Path, h.Args)
		var out tailBuffer
		if err := runner(h, stdin, &out); err != nil {
			errs = append(errs, fmt.Errorf("hooks.%s[%d]: error running %s hook #%d: %q: %w%s", kind, i, kind, i, h.Path, err, out.suffix()))
			if stop {
				break
			}
		}
	}
	return errs
}

// outputLimit bounds how much of a failed hook's output the error shows.
const outputLimit = 4096

// waitDelay is how long Wait lets a killed hook's children hold its
// output pipe open.
const waitDelay = time.Second

// runOne runs one hook in its own process group, so a timeout kills
// whatever it started too.
func runOne(h configs.Hook, stdin []byte, out io.Writer, env Env) error {
	ctx := context.Background()
	if h.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(h.Timeout)*time.Second)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, h.Path)
	cmd.Args = h.Args
	if len(cmd.Args) == 0 {
		cmd.Args = []string{h.Path}
	}
	cmd.Env = h.Env
	if cmd.Env == nil && !env.inherit {
		cmd.Env = append([]string{}, env.vars...)
	}
	cmd.Dir = env.Dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		killGroup(cmd.Process.Pid) // whatever the hook left behind
		return TimedOut(h.Timeout)
	}
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return errors.New(exitErr.ProcessState.String())
		}
		return err
	}
	return nil
}

// TimedOut is the error of a hook killed after its timeout of secs.
func TimedOut(secs int) error { return fmt.Errorf("timed out after %ds", secs) }

// killGroup SIGKILLs the process group pgid.
func killGroup(pgid int) error {
	if err := unix.Kill(-pgid, unix.SIGKILL); err != nil && err != unix.ESRCH {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	return nil
}

// tailBuffer keeps the last outputLimit bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > outputLimit {
		t.b = t.b[len(t.b)-outputLimit:]
	}
	return len(p), nil
}

// suffix is the output for an error message, or nothing.
func (t *tailBuffer) suffix() string {
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return ""
	}
	return ": " + s
}
