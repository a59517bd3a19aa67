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
		id, err := exactlyID(cmd)
		if err != nil {
			return err
		}
		c, err := libcontainer.Load(cmd.Root().String("root"), id)
		if err != nil {
			return err
		}
		defer c.Close()
		data, err := json.MarshalIndent(c.Summarize(), "", "  ")
		if err != nil {
			return err
		}
		fmt.Println(string(data))
		return nil
	},
}
