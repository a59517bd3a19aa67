package main

import (
	"context"
	"fmt"
	"os"

	// The cgo constructor: when husk is started as `husk init` by husk
	// itself (the init socket in its environment), it joins and unshares
	// the namespaces and runs the launcher, which builds the container and
	// execs its process: the Go runtime never starts. Without that socket
	// it returns, and `husk init` below says so.
	_ "github.com/husk-runtime/husk/nsenter"
	"github.com/urfave/cli/v3"
)

// runInit is `husk init` run by hand: the launcher only runs when husk
// starts it, so there is nothing to do.
func runInit() {
	fmt.Fprintln(os.Stderr, "husk init: internal: only husk starts it, with an init socket (see `husk create`)")
	os.Exit(1)
}

var initCommand = &cli.Command{
	Name:   "init",
	Usage:  "internal: the container's first process (do not call)",
	Hidden: true,
	Action: func(ctx context.Context, cmd *cli.Command) error {
		runInit() // exits
		return nil
	},
}
