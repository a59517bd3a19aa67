package main

import (
	"context"
	"errors"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
)

var runCommand = &cli.Command{
	Name:      "run",
	Usage:     "create and start a container, and wait for it unless --detach",
	ArgsUsage: "<container-id>",
	Flags:     append(bundleFlags(), &cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the container runs"}),
	Action: func(ctx context.Context, cmd *cli.Command) error {
		var w *libcontainer.Waiter
		if !cmd.Bool("detach") {
			w = libcontainer.NewWaiter() // before create: no signal is lost
		}
		c, err := createContainer(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.Start(); err != nil {
			return errors.Join(err, c.Delete(true))
		}
		if w == nil {
			return nil
		}
		code := w.Wait(c.State.InitPid)
		if err := c.Delete(true); err != nil {
			return err
		}
		return exitCode(code)
	},
}
