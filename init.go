// The Go runtime (>= 1.25) keeps its cgroup's CPU limit files open to
// update GOMAXPROCS. In `husk init` those are the container's cgroup files
// on the host's cgroupfs, held open read-write while init waits inside the
// container: a process there could rewrite its own CPU quota through
// /proc/1/fd/N. With containermaxprocs=0 the runtime closes them before
// main (see libcontainer/initproc/protect.go). It applies to the whole
// binary (the directive is in main.go, with the other runtime settings);
// the short-lived `husk` commands never needed the update.

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
