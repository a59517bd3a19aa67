package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/trace"
	"github.com/husk-runtime/husk/specconv"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
)

var execCommand = &cli.Command{
	Name:      "exec",
	Usage:     "run a new process in a running container",
	ArgsUsage: "<container-id> <command> [args...]",
	// Flags end at the container id: the rest is the command line.
	StopOnNthArg: intPtr(1),
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "process", Aliases: []string{"p"}, Usage: "a runtime-spec process JSON file (then the flags below that shape the process are ignored)"},
		&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the process runs"},
		&cli.StringFlag{Name: "pid-file", Usage: "write the process's pid to this file"},
		&cli.StringFlag{Name: "console-socket", Usage: "unix socket that receives the pty master (with --tty)"},
		&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "give the process a terminal"},
		&cli.StringFlag{Name: "cwd", Usage: "working directory in the container"},
		&cli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Usage: "add an environment variable NAME=VALUE (repeatable)"},
		&cli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "UID[:GID] to run as"},
		&cli.IntSliceFlag{Name: "additional-gids", Aliases: []string{"g"}, Usage: "additional group id (repeatable)"},
		&cli.StringSliceFlag{Name: "cap", Aliases: []string{"c"}, Usage: "add a capability, e.g. CAP_NET_ADMIN (repeatable)"},
		&cli.BoolFlag{Name: "no-new-privs", Usage: "set no_new_privs for the process"},
		&cli.StringFlag{Name: "apparmor", Usage: "AppArmor profile for the process"},
		&cli.StringFlag{Name: "process-label", Usage: "SELinux label for the process"},
		&cli.IntFlag{Name: "preserve-fds", Usage: "pass N more fds (3, 4, …) to the process"},
		&cli.BoolFlag{Name: "ignore-paused", Usage: "exec into a paused container (the process runs on resume)"},
		pidfdSocketFlag,
		&cli.StringSliceFlag{Name: "cgroup", Usage: "run in a sub-cgroup of the container's: SUB, or CONTROLLER[,CONTROLLER]:SUB on cgroup v1 (repeatable)"},
	},
	// As runc: an exec that fails before the process runs exits 255.
	Action: func(ctx context.Context, cmd *cli.Command) error {
		err := execAction(cmd)
		var code exitCode
		if err != nil && !errors.As(err, &code) {
			return execFailed{err}
		}
		return err
	},
}

// execFailed is an error of husk exec from before the process ran.
type execFailed struct{ err error }

func (e execFailed) Error() string   { return e.err.Error() }
func (e execFailed) Unwrap() error   { return e.err }
func (e execFailed) ExitStatus() int { return 255 }

// execAction runs `husk exec`; it returns the process's exit status as an
// exitCode, or what went wrong before the process ran.
func execAction(cmd *cli.Command) error {
	id, err := containerID(cmd)
	if err != nil {
		return err
	}
	extra, extraEnv, err := passedFiles(cmd)
	if err != nil {
		return err
	}
	c, err := libcontainer.LoadForExec(cmd.Root().String("root"), id)
	if err != nil {
		return err
	}
	// exec changes no state: unlocked, execs into one container run side
	// by side, and an exec waiting on a paused container lets resume in.
	c.Close()
	p, err := processForExec(cmd, c.State.Config)
	if err != nil {
		return err
	}
	if err := configs.CheckProcessLabels(p); err != nil {
		return err
	}
	p.Env = append(p.Env, extraEnv...)
	// Like runc, --process is the whole process: the flags that shape
	// one (--cap among them) apply only without it.
	var addCaps []string
	if cmd.String("process") == "" {
		addCaps = cmd.StringSlice("cap")
	}
	subCgroups, err := libcontainer.ParseSubCgroups(cmd.StringSlice("cgroup"))
	if err != nil {
		return err
	}
	pidfdSock, err := dialPidfdSocket(cmd)
	if err != nil {
		return err
	}
	defer pidfdSock.close()
	detach := cmd.Bool("detach")
	tty, err := setupTerminal(cmd, p, detach)
	if err != nil {
		return err
	}
	defer tty.close()
	var w *launch.Waiter
	if !detach {
		w = launch.NewWaiter() // before the process exists: SIGTERM and the like are caught
	}
	pid, err := c.Exec(libcontainer.ExecOpts{
		Process:      p,
		AddCaps:      addCaps,
		IgnorePaused: cmd.Bool("ignore-paused"),
		PidFile:      cmd.String("pid-file"),
		Stdin:        os.Stdin,
		Stdout:       os.Stdout,
		Stderr:       os.Stderr,
		ExtraFiles:   extra,
		SubCgroups:   subCgroups,
	})
	if err != nil {
		return err
	}
	if err := pidfdSock.send(pid); err != nil {
		unix.Kill(pid, unix.SIGKILL) // nothing left of a failed exec
		return err
	}
	if detach {
		return nil
	}
	resumeGC() // started; relays and waits for as long as it runs
	if tty != nil {
		if err := tty.receive(); err != nil {
			return err
		}
		tty.removeSocket()
		if err := tty.attach(); err != nil {
			logrus.Warn(err)
		}
	}
	code := w.Wait(pid)
	trace.Mark("container")
	return exitCode(code)
}

// processForExec is the process to exec: the --process file as it is, or
// the container's own process with the command line's args and flags.
func processForExec(cmd *cli.Command, cfg *configs.Config) (*configs.Process, error) {
	if path := cmd.String("process"); path != "" {
		p, err := readProcessFile(path)
		if err == nil {
			inheritLabels(p, cfg)
		}
		return p, err
	}
	if cfg == nil || cfg.Process == nil {
		return nil, errors.New("the container's state has no process to start from")
	}
	args := cmd.Args().Slice()[1:]
	if len(args) == 0 {
		return nil, errors.New("exec: give a command to run after the container id, or --process")
	}
	p := cfg.Process.Clone()
	p.Args = args
	p.Terminal = cmd.Bool("tty")
	p.ConsoleSize = nil
	for _, e := range cmd.StringSlice("env") {
		if name, _, ok := strings.Cut(e, "="); !ok || name == "" {
			return nil, fmt.Errorf("--env %q: want NAME=VALUE", e)
		}
		p.Env = append(p.Env, e)
	}
	if cwd := cmd.String("cwd"); cwd != "" {
		if !filepath.IsAbs(cwd) {
			return nil, fmt.Errorf("--cwd %q: must be an absolute path", cwd)
		}
		p.Cwd = filepath.Clean(cwd)
	}
	if u := cmd.String("user"); u != "" {
		uid, gid, err := parseUser(u)
		if err != nil {
			return nil, err
		}
		p.User.UID, p.User.GID = uid, gid
	}
	if cmd.IsSet("additional-gids") {
		p.User.AdditionalGids = nil
		for _, g := range cmd.IntSlice("additional-gids") {
			if g < 0 {
				return nil, fmt.Errorf("--additional-gids %d: not a group id", g)
			}
			if err := configs.ValidID("--additional-gids", uint64(g)); err != nil {
				return nil, err
			}
			p.User.AdditionalGids = append(p.User.AdditionalGids, uint32(g))
		}
	}
	if cmd.Bool("no-new-privs") {
		p.NoNewPrivileges = true
	}
	if v := cmd.String("apparmor"); v != "" {
		p.AppArmorProfile = v
	}
	if v := cmd.String("process-label"); v != "" {
		p.SelinuxLabel = v
	}
	return p, nil
}

// inheritLabels gives a --process file without an AppArmor profile or an
// SELinux label the container's, as runc does: an exec is never less
// confined than the container because its process file names none.
func inheritLabels(p *configs.Process, cfg *configs.Config) {
	if cfg == nil || cfg.Process == nil {
		return
	}
	if p.AppArmorProfile == "" {
		p.AppArmorProfile = cfg.Process.AppArmorProfile
	}
	if p.SelinuxLabel == "" {
		p.SelinuxLabel = cfg.Process.SelinuxLabel
	}
}

// readProcessFile reads and checks a runtime-spec process JSON.
func readProcessFile(path string) (*configs.Process, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--process: %w", err)
	}
	sp, err := specconv.ParseProcess(data)
	if err != nil {
		return nil, fmt.Errorf("--process %s: %w: %w", path, libcontainer.ErrInvalidConfig, err)
	}
	p, warnings, err := specconv.ConvertProcess(sp)
	if err != nil {
		return nil, fmt.Errorf("--process %s: %w: %w", path, libcontainer.ErrInvalidConfig, err)
	}
	for _, w := range warnings {
		logrus.Warnf("--process %s: %s", path, w)
	}
	return p, nil
}

// parseUser parses --user UID[:GID] (numbers, as in runc), each in
// 0-2147483647: a larger one is refused, never wrapped.
func parseUser(s string) (uid, gid uint32, err error) {
	us, gs, hasGID := strings.Cut(s, ":")
	u, err := parseID(s, "uid", us)
	if err != nil || !hasGID {
		return u, 0, err
	}
	g, err := parseID(s, "gid", gs)
	return u, g, err
}

func parseID(flag, what, s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("--user %q: the %s must be a number", flag, what)
	}
	if err != nil || n > configs.MaxID {
		return 0, fmt.Errorf("--user %q: %s %s: uids and gids must be in range 0-%d", flag, what, s, configs.MaxID)
	}
	return uint32(n), nil
}
