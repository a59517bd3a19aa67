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
		return withContainerLifecycle(cmd, startNotifying)
	},
}

// startNotifying starts c and, for a container made under a service
// manager's NOTIFY_SOCKET, waits (unlocked) for its READY=1 and relays it,
// as runc start does.
func startNotifying(c *libcontainer.Container) error {
	relay, err := c.NotifyRelay()
	if err != nil {
		return err
	}
	defer relay.Close()
	if err := c.Start(); err != nil || relay == nil {
		return err
	}
	pid := c.State.InitPid
	c.Close()
	return relay.WaitReady(pid)
}
