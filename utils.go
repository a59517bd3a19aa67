package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v3"
)

// containerID is the command's one positional argument.
func containerID(cmd *cli.Command) (string, error) {
	if cmd.Args().Len() < 1 {
		return "", fmt.Errorf("%s: missing the container id", cmd.Name)
	}
	return cmd.Args().First(), nil
}

// exactlyID is containerID for commands that take nothing else.
func exactlyID(cmd *cli.Command) (string, error) {
	if cmd.Args().Len() != 1 {
		return "", fmt.Errorf("%s: takes exactly one argument, the container id (got %d)", cmd.Name, cmd.Args().Len())
	}
	return cmd.Args().First(), nil
}

// withContainer loads the container named by the command's one argument
// and runs do on it, holding its lock.
func withContainer(cmd *cli.Command, do func(*libcontainer.Container) error) error {
	return withLoaded(cmd, libcontainer.Load, do)
}

// withContainerLifecycle is withContainer for start, state, pause and
// resume, which do not read the container's process (see
// libcontainer.LoadLifecycle).
func withContainerLifecycle(cmd *cli.Command, do func(*libcontainer.Container) error) error {
	return withLoaded(cmd, libcontainer.LoadLifecycle, do)
}

func withLoaded(cmd *cli.Command, load func(root, id string) (*libcontainer.Container, error), do func(*libcontainer.Container) error) error {
	id, err := exactlyID(cmd)
	if err != nil {
		return err
	}
	c, err := load(cmd.Root().String("root"), id)
	if err != nil {
		return err
	}
	defer c.Close()
	return do(c)
}

// loadBundle reads BUNDLE/config.json, applies edit (if not nil) to the
// spec, and converts it, so what edit adds is checked as the bundle's own
// would be; every error is "invalid configuration: config.json: "
// (libcontainer.ConfigError) and names the field.
func loadBundle(bundle string, opts specconv.Options, edit func(*specs.Spec)) (string, *specs.Spec, *configs.Config, error) {
	abs, err := filepath.Abs(bundle)
	if err != nil {
		return "", nil, nil, fmt.Errorf("--bundle %q: %w", bundle, err)
	}
	data, err := os.ReadFile(filepath.Join(abs, "config.json"))
	if err != nil {
		return "", nil, nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	spec, err := specconv.Parse(data)
	if err != nil {
		return "", nil, nil, libcontainer.ConfigError(err)
	}
	if edit != nil {
		edit(spec)
	}
	opts.Bundle = abs
	cfg, warnings, err := specconv.Convert(spec, opts)
	if err != nil {
		return "", nil, nil, libcontainer.ConfigError(err)
	}
	for _, w := range warnings {
		logrus.Warn("config.json: " + w)
	}
	return abs, spec, cfg, nil
}

// notSupported refuses a flag husk does not implement yet, so no caller
// believes it took effect.
func notSupported(cmd *cli.Command, flags ...string) error {
	for _, f := range flags {
		if cmd.IsSet(f) {
			return fmt.Errorf("%s --%s: not supported yet", cmd.Name, f)
		}
	}
	return nil
}
