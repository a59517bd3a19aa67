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
		return withContainerLifecycle(cmd, (*libcontainer.Container).Start)
	},
}
