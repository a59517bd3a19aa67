package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/notify"
	"github.com/husk-runtime/husk/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"
)

// bundleFlags are the flags create and run share.
func bundleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Value: ".", Usage: "path to the OCI bundle"},
		&cli.StringFlag{Name: "pid-file", Usage: "write the container's init pid to this file"},
		&cli.StringFlag{Name: "console-socket", Usage: "unix socket that receives the pty master of a process with a terminal"},
		&cli.BoolFlag{Name: "no-pivot", Usage: "do not use pivot_root (for a rootfs on a ramdisk)"},
		&cli.BoolFlag{Name: "no-new-keyring", Usage: "keep the caller's session keyring"},
		&cli.IntFlag{Name: "preserve-fds", Usage: "pass N more fds (3, 4, …) to the process"},
		pidfdSocketFlag,
	}
}

var createCommand = &cli.Command{
	Name:      "create",
	Usage:     "create a container, stopped before its process runs",
	ArgsUsage: "<container-id>",
	Flags:     append(bundleFlags(), &cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "accepted: create always detaches"}),
	Action: func(ctx context.Context, cmd *cli.Command) error {
		_, _, err := createContainer(cmd, true)
		return err
	},
}

// createContainer is create, and the first half of run. With a terminal
// and no --console-socket, a foreground run gets the pty to attach.
func createContainer(cmd *cli.Command, detach bool) (*libcontainer.Container, *foregroundTTY, error) {
	id, err := exactlyID(cmd)
	if err != nil {
		return nil, nil, err
	}
	extra, extraEnv, err := passedFiles(cmd)
	if err != nil {
		return nil, nil, err
	}
	withNotify, err := notifyEdit(cmd, id)
	if err != nil {
		return nil, nil, err
	}
	bundle, spec, cfg, err := loadBundle(cmd.String("bundle"), specconv.Options{
		NoPivotRoot:   cmd.Bool("no-pivot"),
		NoNewKeyring:  cmd.Bool("no-new-keyring"),
		SystemdCgroup: cmd.Root().Bool("systemd-cgroup"),
	}, withNotify)
	if err != nil {
		return nil, nil, err
	}
	rl, err := rootlessOptions(cmd, spec)
	if err != nil {
		return nil, nil, libcontainer.ConfigError(err)
	}
	cfg.ID, cfg.Bundle = id, bundle
	if cmd.Bool("tty") {
		cfg.Process.Terminal = true
	}
	cfg.Process.Env = append(cfg.Process.Env, extraEnv...)
	pidfdSock, err := dialPidfdSocket(cmd)
	if err != nil {
		return nil, nil, err
	}
	defer pidfdSock.close()
	tty, err := setupTerminal(cmd, cfg.Process, detach)
	if err != nil {
		return nil, nil, err
	}
	c, err := libcontainer.Create(libcontainer.CreateOpts{
		Root:       cmd.Root().String("root"),
		ID:         id,
		Bundle:     bundle,
		Config:     cfg,
		PidFile:    cmd.String("pid-file"),
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: extra,
		CNI:        cniOptions(cmd),
		Rootless:   rl,
		Notify:     withNotify != nil,
	})
	if err != nil {
		tty.close()
		return nil, nil, err
	}
	if err := pidfdSock.send(c.State.InitPid); err != nil {
		tty.close()
		err = errors.Join(err, c.Delete(true))
		c.Close()
		return nil, nil, err
	}
	return c, tty, nil
}

// notifyEdit is the spec edit of a container made (create, run) or
// restored under a service manager's NOTIFY_SOCKET: it gets husk's relay
// socket instead (libcontainer/notify), mounted as a bind of the
// bundle's would be. nil without NOTIFY_SOCKET.
func notifyEdit(cmd *cli.Command, id string) (func(*specs.Spec), error) {
	if notify.HostSocket() == "" {
		return nil, nil
	}
	root, err := filepath.Abs(cmd.Root().String("root"))
	if err != nil {
		return nil, fmt.Errorf("--root: %w", err)
	}
	return func(s *specs.Spec) { notify.AddToSpec(s, filepath.Join(root, id)) }, nil
}
