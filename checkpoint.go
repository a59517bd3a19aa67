package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/criu"
	"github.com/urfave/cli/v3"
)

// criuFlags are the flags checkpoint and restore share, with runc's names
// and defaults.
func criuFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "image-path", Usage: "directory of CRIU's image files (default: ./checkpoint)"},
		&cli.StringFlag{Name: "work-path", Usage: "directory of CRIU's work files and log (default: the image directory)"},
		&cli.BoolFlag{Name: "tcp-established", Usage: "allow open TCP connections"},
		&cli.BoolFlag{Name: "ext-unix-sk", Usage: "allow external unix sockets"},
		&cli.BoolFlag{Name: "shell-job", Usage: "allow shell jobs"},
		&cli.BoolFlag{Name: "file-locks", Usage: "handle file locks"},
		&cli.StringFlag{Name: "manage-cgroups-mode", Usage: "cgroups mode: soft (default), full, strict or ignore"},
		&cli.StringSliceFlag{Name: "empty-ns", Usage: "make a namespace, but do not restore its properties (network)"},
		&cli.BoolFlag{Name: "auto-dedup", Usage: "deduplicate memory images automatically"},
		&cli.BoolFlag{Name: "lazy-pages", Usage: "restore memory pages lazily, with userfaultfd"},
	}
}

var checkpointCommand = &cli.Command{
	Name:      "checkpoint",
	Usage:     "checkpoint a running container with CRIU",
	ArgsUsage: "<container-id>",
	Flags: append(criuFlags(),
		&cli.StringFlag{Name: "parent-path", Usage: "previous (pre-)dump, relative to --image-path"},
		&cli.BoolFlag{Name: "leave-running", Usage: "leave the process running after checkpointing"},
		&cli.BoolFlag{Name: "tcp-skip-in-flight", Usage: "skip in-flight TCP connections"},
		&cli.BoolFlag{Name: "link-remap", Usage: "allow one to link unlinked files back when possible"},
		&cli.IntFlag{Name: "status-fd", Value: -1, Usage: "write \\0 to this fd once the lazy-pages server is ready"},
		&cli.StringFlag{Name: "page-server", Usage: "ADDRESS:PORT of the page server"},
		&cli.BoolFlag{Name: "pre-dump", Usage: "dump the container's memory only, and leave it running"},
	),
	Action: func(ctx context.Context, cmd *cli.Command) error {
		o, err := criuOptions(cmd)
		if err != nil {
			return err
		}
		return withContainer(cmd, func(c *libcontainer.Container) error {
			return c.Checkpoint(o)
		})
	},
}

// criuOptions reads the flags of checkpoint or restore.
func criuOptions(cmd *cli.Command) (*criu.Options, error) {
	image := cmd.String("image-path")
	if image == "" {
		image = "checkpoint"
	}
	abs, err := filepath.Abs(image)
	if err != nil {
		return nil, fmt.Errorf("--image-path %s: %w", image, err)
	}
	o := &criu.Options{
		Binary:          cmd.Root().String("criu"),
		ImagePath:       abs,
		WorkPath:        cmd.String("work-path"),
		ParentPath:      cmd.String("parent-path"),
		LeaveRunning:    cmd.Bool("leave-running"),
		TCPEstablished:  cmd.Bool("tcp-established"),
		TCPSkipInFlight: cmd.Bool("tcp-skip-in-flight"),
		LinkRemap:       cmd.Bool("link-remap"),
		ExtUnixSk:       cmd.Bool("ext-unix-sk"),
		ShellJob:        cmd.Bool("shell-job"),
		LazyPages:       cmd.Bool("lazy-pages"),
		StatusFd:        -1,
		PageServer:      cmd.String("page-server"),
		FileLocks:       cmd.Bool("file-locks"),
		PreDump:         cmd.Bool("pre-dump"),
		ManageCgroups:   cmd.String("manage-cgroups-mode"),
		EmptyNs:         cmd.StringSlice("empty-ns"),
		AutoDedup:       cmd.Bool("auto-dedup"),
		LsmProfile:      cmd.String("lsm-profile"),
		LsmMountContext: cmd.String("lsm-mount-context"),
	}
	if cmd.IsSet("status-fd") {
		o.StatusFd = int(cmd.Int("status-fd"))
	}
	if o.WorkPath != "" {
		if o.WorkPath, err = filepath.Abs(o.WorkPath); err != nil {
			return nil, fmt.Errorf("--work-path: %w", err)
		}
	}
	return o, o.Check()
}
