package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/launch"
	"github.com/husk-runtime/husk/specconv"
	"github.com/urfave/cli/v3"
)

var restoreCommand = &cli.Command{
	Name:      "restore",
	Usage:     "restore a container from a CRIU checkpoint",
	ArgsUsage: "<container-id>",
	Flags: append(criuFlags(),
		&cli.StringFlag{Name: "console-socket", Usage: "unix socket that receives the restored pty's master (process.terminal)"},
		&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Value: ".", Usage: "path to the OCI bundle"},
		&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the container runs"},
		&cli.StringFlag{Name: "pid-file", Usage: "write the restored init's pid to this file"},
		&cli.BoolFlag{Name: "no-subreaper", Usage: "do not become a subreaper of the restored processes"},
		&cli.BoolFlag{Name: "no-pivot", Usage: "accepted: CRIU restores the container's root as it was"},
		&cli.StringFlag{Name: "lsm-profile", Usage: "LSM profile of the restored process, TYPE:NAME"},
		&cli.StringFlag{Name: "lsm-mount-context", Usage: "LSM mount context of the restored mounts"},
	),
	Action: func(ctx context.Context, cmd *cli.Command) error {
		id, err := exactlyID(cmd)
		if err != nil {
			return err
		}
		o, err := criuOptions(cmd)
		if err != nil {
			return err
		}
		// As runc: the restored container has the relay's bind at
		// /run/notify again (CRIU restores it as an external mount, from
		// the new state dir), and nothing is relayed: its process said
		// READY before the checkpoint.
		withNotify, err := notifyEdit(cmd, id)
		if err != nil {
			return err
		}
		bundle, spec, cfg, err := loadBundle(cmd.String("bundle"), specconv.Options{
			NoPivotRoot:   cmd.Bool("no-pivot"),
			SystemdCgroup: cmd.Root().Bool("systemd-cgroup"),
		}, withNotify)
		if err != nil {
			return err
		}
		rl, err := rootlessOptions(cmd, spec)
		if err != nil {
			return libcontainer.ConfigError(err)
		}
		cfg.ID, cfg.Bundle = id, bundle
		socket := cmd.String("console-socket")
		if socket != "" {
			if socket, err = filepath.Abs(socket); err != nil {
				return fmt.Errorf("--console-socket: %w", err)
			}
		}
		var w *launch.Waiter
		if !cmd.Bool("detach") {
			w = launch.NewWaiter()
		}
		c, err := libcontainer.Restore(libcontainer.RestoreOpts{
			Root: cmd.Root().String("root"), ID: id, Bundle: bundle, Config: cfg,
			PidFile: cmd.String("pid-file"), ConsoleSocket: socket,
			Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			CNI: cniOptions(cmd), Rootless: rl, Criu: o, NoSubreaper: cmd.Bool("no-subreaper"),
			Notify: withNotify != nil,
		})
		if err != nil {
			return err
		}
		pid := c.State.InitPid
		c.Close()
		if w == nil {
			return nil
		}
		resumeGC() // restored; waits for as long as it runs
		w.Ready()
		code := w.Wait(pid)
		if err := c.Relock(); err != nil {
			if errors.Is(err, libcontainer.ErrNotExist) {
				return exitCode(code)
			}
			return err
		}
		err = c.Delete(true)
		c.Close()
		if err != nil {
			return err
		}
		return exitCode(code)
	},
}
