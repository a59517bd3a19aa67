package main

import (
	"context"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
)

var startCommand = &cli.Command{
	Name:      "start",
	Usage:     "run the process of a created container",
	ArgsUsage: "<container-id>",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		id, err := exactlyID(cmd)
		if err != nil {
			return err
		}
		c, err := libcontainer.Load(cmd.Root().String("root"), id)
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Start()
	},
}
