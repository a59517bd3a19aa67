package main

import (
	"context"
	"errors"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/libcontainer/notify"
	"github.com/husk-runtime/husk/libcontainer/trace"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v3"
)

var runCommand = &cli.Command{
	Name:      "run",
	Usage:     "create and start a container, and wait for it unless --detach",
	ArgsUsage: "<container-id>",
	Flags: append(bundleFlags(),
		&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the container runs"},
		&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "give the process a terminal (process.terminal)"},
		&cli.BoolFlag{Name: "keep", Usage: "do not delete the container after it exits (as runc run --keep)"},
	),
	Action: func(ctx context.Context, cmd *cli.Command) error {
		var w *launch.Waiter
		if !cmd.Bool("detach") {
			w = launch.NewWaiter() // before create: SIGTERM and the like are caught
		}
		c, tty, err := createContainer(cmd, cmd.Bool("detach"))
		if err != nil {
			return err
		}
		defer tty.close()
		if tty != nil {
			err = tty.receive()
			tty.removeSocket()
		}
		var relay *notify.Relay
		if err == nil {
			relay, err = c.NotifyRelay()
		}
		defer relay.Close()
		if err == nil {
			w.Ready()
			err = c.Start()
		}
		if err != nil {
			err = errors.Join(err, c.Delete(true))
			c.Close()
			return err
		}
		pid := c.State.InitPid
		// Unlocked while waiting, so state, kill and delete work meanwhile.
		c.Close()
		if w == nil {
			// --detach returns once the container is ready, as runc's.
			if relay != nil {
				resumeGC() // waits for as long as the process takes
				return relay.WaitReady(pid)
			}
			return nil
		}
		resumeGC() // started; waits for as long as it runs
		if relay != nil {
			go func() {
				if err := relay.WaitReady(pid); err != nil {
					logrus.Warn(err)
				}
			}()
		}
		if tty != nil {
			if err := tty.attach(); err != nil {
				logrus.Warn(err)
			}
		}
		code := w.Wait(pid)
		trace.Mark("container")
		err = c.Relock()
		switch {
		case errors.Is(err, libcontainer.ErrNotExist):
			// Deleted by someone else while we waited (perhaps made again).
		case err != nil:
			return err
		case cmd.Bool("keep"):
			// Left stopped, for state and delete.
			c.Close()
		default:
			err = c.Delete(true)
			trace.Mark("teardown")
			c.Close()
			if err != nil {
				return err
			}
		}
		return exitCode(code)
	},
}
