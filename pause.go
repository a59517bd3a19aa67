package main

import (
	"context"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
)

var pauseCommand = &cli.Command{
	Name:      "pause",
	Usage:     "freeze every process of a container (cgroup freezer)",
	ArgsUsage: "<container-id>",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		return withContainerLifecycle(cmd, (*libcontainer.Container).Pause)
	},
}

var resumeCommand = &cli.Command{
	Name:      "resume",
	Usage:     "thaw a paused container",
	ArgsUsage: "<container-id>",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		return withContainerLifecycle(cmd, (*libcontainer.Container).Resume)
	},
}
