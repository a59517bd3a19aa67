package main

import (
	"context"
	"errors"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
)

var deleteCommand = &cli.Command{
	Name:      "delete",
	Usage:     "remove a stopped container (with --force, any container)",
	ArgsUsage: "<container-id>",
	Flags: []cli.Flag{
		&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "kill the container first if it runs"},
	},
	Action: func(ctx context.Context, cmd *cli.Command) error {
		id, err := exactlyID(cmd)
		if err != nil {
			return err
		}
		root := cmd.Root().String("root")
		c, err := libcontainer.LoadLifecycle(root, id)
		if errors.Is(err, libcontainer.ErrNotExist) && cmd.Bool("force") {
			// Like runc: nothing to delete is fine with --force, and a
			// create killed before it saved its state leaves a bare dir
			// (and maybe a CNI network).
			return libcontainer.RemoveUnfinished(root, id)
		}
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Delete(cmd.Bool("force"))
	},
}
