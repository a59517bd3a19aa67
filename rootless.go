package main

import (
	"context"
	"errors"
	"os"
	"slices"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/rootless"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
)

// setupRootless checks --rootless and, when --root was not given, puts a
// caller without root's state in $XDG_RUNTIME_DIR/husk, as runc.
func setupRootless(ctx context.Context, cmd *cli.Command) (context.Context, error) {
	if _, err := rootless.ParseMode(cmd.String("rootless")); err != nil {
		return ctx, err
	}
	if !cmd.IsSet("root") {
		// Set makes IsSet true: remember that this one is the default,
		// for list (rootGiven).
		if cmd.Metadata == nil {
			cmd.Metadata = map[string]any{}
		}
		cmd.Metadata[defaultRootKey] = true
		if err := cmd.Set("root", rootless.DefaultStateRoot(rootless.Self(), os.Getenv)); err != nil {
			return ctx, err
		}
	}
	return ctx, nil
}

// defaultRootKey marks, in the root command's Metadata, a --root that
// setupRootless chose rather than the caller.
const defaultRootKey = "husk.defaultRoot"

// rootGiven reports whether the caller named --root: setupRootless sets
// the default itself, which makes cli's IsSet true.
func rootGiven(cmd *cli.Command) bool {
	r := cmd.Root()
	chosen, _ := r.Metadata[defaultRootKey].(bool)
	return r.IsSet("root") && !chosen
}

// rootlessOptions is what Create does differently for the caller: the
// checks that need the spec (device nodes it cannot make, the limit field
// a cgroup-less container would drop) are made here.
func rootlessOptions(cmd *cli.Command, spec *specs.Spec) (libcontainer.Rootless, error) {
	mode, err := rootless.ParseMode(cmd.Root().String("rootless"))
	if err != nil {
		return libcontainer.Rootless{}, err
	}
	caller := rootless.Self()
	r := libcontainer.Rootless{Caller: caller, Cgroups: mode.Cgroups(caller)}
	if spec.Linux != nil {
		r.LimitField = rootless.FirstLimit(spec.Linux.Resources)
		r.CgroupsPath = spec.Linux.CgroupsPath
		if caller.EUID != 0 && !slices.ContainsFunc(spec.Linux.Namespaces, isUserNS) {
			return r, errors.New(`linux.namespaces: a user without root needs a "user" namespace (new, or joined by path) to make the others`)
		}
		if caller.Unprivileged() {
			// Without systemd at all, the cgroup driver says so itself.
			if cmd.Root().Bool("systemd-cgroup") && r.Cgroups && statErr("/run/systemd/system") == nil {
				if _, err := rootless.SystemdUserBus(os.Getenv, statErr); err != nil {
					return r, err
				}
			}
			if err := rootless.CheckDevices(spec.Linux.Devices, unix.Stat); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

func isUserNS(ns specs.LinuxNamespace) bool { return ns.Type == specs.UserNamespace }

func statErr(p string) error {
	_, err := os.Stat(p)
	return err
}
