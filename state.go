package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
)

var stateCommand = &cli.Command{
	Name:      "state",
	Usage:     "print a container's state as JSON",
	ArgsUsage: "<container-id>",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		return withContainer(cmd, func(c *libcontainer.Container) error {
			data, err := json.MarshalIndent(c.Summarize(), "", "  ")
			if err != nil {
				return err
			}
			fmt.Println(string(data))
			return nil
		})
	},
}
