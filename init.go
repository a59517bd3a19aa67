// The Go runtime (>= 1.25) keeps its cgroup's CPU limit files open to
// update GOMAXPROCS. In Go init those are the container's cgroup files on
// the host's cgroupfs, held open read-write inside the container while Go
// init builds it. With containermaxprocs=0 the runtime closes them before
// main. It applies to the whole binary (the directive is in main.go, with
// the other runtime settings); the short-lived `husk` commands never
// needed the update.

package main

import (
	"context"

	"github.com/husk-runtime/husk/libcontainer/initproc"
	// The cgo constructor that joins and unshares namespaces and runs the
	// launcher before the Go runtime starts; a no-op unless husk was
	// started as `husk init`. Its pty function is Go init's too.
	"github.com/husk-runtime/husk/nsenter"
	"github.com/urfave/cli/v3"
)

// runInit is Go init (it exits), with the launcher's pty.
func runInit() { initproc.Init(nsenter.OpenPty) }

var initCommand = &cli.Command{
	Name:   "init",
	Usage:  "internal: the container's first process (do not call)",
	Hidden: true,
	Action: func(ctx context.Context, cmd *cli.Command) error {
		runInit() // exits
		return nil
	},
}
