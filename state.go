package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/urfave/cli/v3"
)

var stateCommand = &cli.Command{
	Name:      "state",
	Usage:     "print a container's state as JSON",
	ArgsUsage: "<container-id>",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		return withContainerLifecycle(cmd, func(c *libcontainer.Container) error {
			// runc's fields, then husk's CNI attachment if there is one.
			data, err := json.MarshalIndent(struct {
				libcontainer.Summary
				CNI *cni.Record `json:"cni,omitempty"`
			}{c.Summarize(), c.Network()}, "", "  ")
			if err != nil {
				return err
			}
			fmt.Println(string(data))
			return nil
		})
	},
}
