package main

import (
	"context"

	"github.com/husk-runtime/husk/libcontainer/initproc"
	// The cgo constructor that joins and unshares namespaces before the Go
	// runtime starts; a no-op unless husk was started as `husk init`.
	_ "github.com/husk-runtime/husk/nsenter"
	"github.com/urfave/cli/v3"
)

var initCommand = &cli.Command{
	Name:   "init",
	Usage:  "internal: the container's first process (do not call)",
	Hidden: true,
	Action: func(ctx context.Context, cmd *cli.Command) error {
		initproc.Init() // exits
		return nil
	},
}
