package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
)

var killCommand = &cli.Command{
	Name:         "kill",
	Usage:        "send a signal (default SIGTERM) to a container's init",
	ArgsUsage:    "<container-id> [signal]",
	StopOnNthArg: intPtr(1),
	Flags: []cli.Flag{
		&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "signal every process in the container's cgroups"},
	},
	Action: func(ctx context.Context, cmd *cli.Command) error {
		args := cmd.Args().Slice()
		if len(args) < 1 || len(args) > 2 {
			return fmt.Errorf("kill: takes the container id and an optional signal (got %d arguments)", len(args))
		}
		sig := unix.SIGTERM
		if len(args) == 2 {
			var err error
			if sig, err = parseSignal(args[1]); err != nil {
				return err
			}
		}
		c, err := libcontainer.LoadLifecycle(cmd.Root().String("root"), args[0])
		if err != nil {
			return err
		}
		defer c.Close()
		if cmd.Bool("all") {
			return c.SignalAll(sig)
		}
		return c.Signal(sig)
	},
}

func intPtr(n int) *int { return &n }

// parseSignal accepts "9", "KILL", "SIGKILL" and "sigkill", and 0, the
// liveness check (no signal is sent).
func parseSignal(s string) (unix.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > 64 {
			return 0, fmt.Errorf("signal: %d is out of range", n)
		}
		return unix.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("signal: unknown %q", s)
}
