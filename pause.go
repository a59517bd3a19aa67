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
		return withContainer(cmd, (*libcontainer.Container).Pause)
	},
}

var resumeCommand = &cli.Command{
	Name:      "resume",
	Usage:     "thaw a paused container",
	ArgsUsage: "<container-id>",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		return withContainer(cmd, (*libcontainer.Container).Resume)
	},
}

// withContainer loads the container named by the command's one argument
// and runs do on it, holding its lock.
func withContainer(cmd *cli.Command, do func(*libcontainer.Container) error) error {
	id, err := exactlyID(cmd)
	if err != nil {
		return err
	}
	c, err := libcontainer.Load(cmd.Root().String("root"), id)
	if err != nil {
		return err
	}
	defer c.Close()
	return do(c)
}
