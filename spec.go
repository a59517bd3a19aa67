package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer/cgroup"
	"github.com/husk-runtime/husk/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"
)

var specCommand = &cli.Command{
	Name:  "spec",
	Usage: "write a default config.json into the bundle",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Value: ".", Usage: "bundle directory"},
		&cli.BoolFlag{Name: "rootless", Usage: "a spec for a container of a user without root (runc's rootless spec)"},
	},
	Action: func(ctx context.Context, cmd *cli.Command) error {
		spec := specconv.Example()
		if cgroup.HostLayout() == cgroup.V2 {
			// As runc's spec: on a pure v2 host a container sees its own
			// cgroup as the root of /sys/fs/cgroup.
			spec.Linux.Namespaces = append(spec.Linux.Namespaces, specs.LinuxNamespace{Type: specs.CgroupNamespace})
		}
		if cmd.Bool("rootless") {
			specconv.ToRootless(spec, uint32(os.Geteuid()), uint32(os.Getegid()))
		}
		path := filepath.Join(cmd.String("bundle"), "config.json")
		data, err := json.MarshalIndent(spec, "", "\t")
		if err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("spec: %s already exists; remove it first or use another --bundle", path)
		}
		if err != nil {
			return fmt.Errorf("spec: %w", err)
		}
		if _, err := f.Write(append(data, '\n')); err != nil {
			f.Close()
			return fmt.Errorf("spec: write %s: %w", path, err)
		}
		return f.Close()
	},
}
