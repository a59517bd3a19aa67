// Command husk is an OCI container runtime with runc's command line.

// Every husk process is short-lived (or waits, idle): the runtime must not
// size GOMAXPROCS from the cgroup CPU limit, re-check that limit
// periodically, or name each anonymous mapping with an extra syscall. (Go
// 1.26 still reads the limit once at start, /proc/self/cgroup and
// mountinfo included, only to count whether this setting mattered; no
// setting skips that read.)
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
//go:debug decoratemappings=0
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/trace"
	_ "github.com/husk-runtime/husk/onep" // one P from the runtime's start
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v3"
)

// versionFile is the repository's VERSION, the one place the version is
// written; the Makefile reads the same file (tarball and package names).
//
//go:embed VERSION
var versionFile string

// Set by the Makefile with -ldflags -X; a plain `go build` takes the
// version from VERSION and the commit from go's VCS stamp (version.go).
var (
	version = strings.TrimSpace(versionFile)
	commit  = ""
)

// exitCode makes husk exit with a given status and no message: `run`
// exits with the container's.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	startGC()
	cli.VersionPrinter = func(*cli.Command) { printVersion(os.Stdout) }
	app := &cli.Command{
		Name:    "husk",
		Usage:   "an OCI container runtime (runc's command line)",
		Version: version,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "root", Value: "/run/husk", Usage: "directory for container state (default for a user without root: $XDG_RUNTIME_DIR/husk)"},
			&cli.StringFlag{Name: "log", Usage: "log file (default: stderr)"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format: text or json"},
			&cli.BoolFlag{Name: "debug", Usage: "log debug messages"},
			&cli.BoolFlag{Name: "systemd-cgroup", Usage: "use the systemd cgroup driver: a transient scope per container; linux.cgroupsPath is slice:prefix:name"},
			&cli.StringFlag{Name: "rootless", Value: "auto", Usage: "handle cgroups the rootless way (made where writable, skipped otherwise): true, false or auto (when not root)"},
			&cli.StringFlag{Name: "criu", Value: "criu", Usage: "the criu binary checkpoint and restore run"},
		}, cniFlags...),
		Before: func(ctx context.Context, cmd *cli.Command) (context.Context, error) {
			ctx, err := setupLogging(ctx, cmd)
			if err != nil {
				return ctx, err
			}
			return setupRootless(ctx, cmd)
		},
		Commands: []*cli.Command{
			createCommand, startCommand, runCommand, stateCommand, killCommand,
			deleteCommand, listCommand, specCommand, initCommand,
			execCommand, pauseCommand, resumeCommand, updateCommand, eventsCommand, psCommand,
			featuresCommand, cniCommand, cniHookCommand, checkpointCommand, restoreCommand,
		},
		// Errors are printed once, by main.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
	}
	app.Commands = commandsFor(app, os.Args)
	err := app.Run(context.Background(), os.Args)
	trace.Mark("exit")
	var code exitCode
	var status interface{ ExitStatus() int }
	switch {
	case err == nil:
	case errors.As(err, &code):
		os.Exit(int(code))
	case errors.As(err, &status):
		reportError(err)
		os.Exit(status.ExitStatus())
	default:
		reportError(err)
		os.Exit(1)
	}
}

// commandsFor is the one command args names, when it names one: the cli
// prepares every registered command and flag before it parses (help
// flags, defaults, categories), about 0.3 ms of every husk process for
// the 17 it does not run. Otherwise (no command, help, an unknown word,
// a "--") it is all of them, so help and errors are the cli's own.
func commandsFor(app *cli.Command, args []string) []*cli.Command {
	takesValue := map[string]bool{}
	for _, f := range app.Flags {
		if v, ok := f.(interface{ TakesValue() bool }); ok && v.TakesValue() {
			for _, n := range f.Names() {
				takesValue[n] = true
			}
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			break
		}
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] {
				i++ // the flag's value
			}
			continue
		}
		for _, c := range app.Commands {
			if c.Name == a && len(c.Aliases) == 0 {
				return []*cli.Command{c}
			}
		}
		break
	}
	return app.Commands
}

// logFile is the --log file, if one was given.
var logFile *os.File

func setupLogging(ctx context.Context, cmd *cli.Command) (context.Context, error) {
	if cmd.Bool("debug") {
		logrus.SetLevel(logrus.DebugLevel)
	}
	switch f := cmd.String("log-format"); f {
	case "text":
		logrus.SetFormatter(&logrus.TextFormatter{DisableColors: true})
	case "json":
		logrus.SetFormatter(&logrus.JSONFormatter{})
	default:
		return ctx, fmt.Errorf("--log-format: unknown %q (text or json)", f)
	}
	if path := cmd.String("log"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return ctx, fmt.Errorf("--log: %w", err)
		}
		logFile = f
		logrus.SetOutput(f)
	}
	trace.SetDebug(cmd.Bool("debug"))
	trace.Start(cmd.Args().First())
	return ctx, nil
}

// reportError logs err as an error record to --log (containerd shows the
// last one's msg to users) and prints it as husk's last line on stderr.
func reportError(err error) {
	if logFile != nil {
		logrus.Error(err)
	}
	fmt.Fprintln(os.Stderr, "husk: "+err.Error())
}
