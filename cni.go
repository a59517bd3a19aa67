package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/libcontainer/cni"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"
)

// cniFlags are the global flags that say where CNI finds things.
var cniFlags = []cli.Flag{
	&cli.StringFlag{Name: "cni-conf-dir", Value: "/etc/cni/net.d", Usage: "directory of CNI network lists"},
	&cli.StringFlag{Name: "cni-bin-dir", Value: "/opt/cni/bin:/usr/lib/cni", Usage: "CNI plugin directories, colon-separated"},
	&cli.StringFlag{Name: "cni-cache-dir", Value: "/var/lib/cni", Usage: "libcni's cache of ADD results"},
}

// cniOptions are the CNI global flags' values, as absolute paths: they are
// recorded at create and used again by delete, from any directory.
func cniOptions(cmd *cli.Command) cni.Options {
	root := cmd.Root()
	var bins []string
	for _, d := range strings.Split(root.String("cni-bin-dir"), ":") {
		if d != "" {
			bins = append(bins, absPath(d))
		}
	}
	return cni.Options{
		ConfDir:  absPath(root.String("cni-conf-dir")),
		BinDirs:  bins,
		CacheDir: absPath(root.String("cni-cache-dir")),
	}
}

// absPath is path made absolute; left as it is if that fails (the later
// use then says what is wrong with it).
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

var cniCommand = &cli.Command{
	Name:  "cni",
	Usage: "act on a container's CNI network (husk's built-in CNI path)",
	Commands: []*cli.Command{{
		Name:      "check",
		Usage:     "run the CNI CHECK of the container's network",
		ArgsUsage: "<container-id>",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return withContainer(cmd, func(c *libcontainer.Container) error {
				return c.CheckNetwork()
			})
		},
	}},
}

var cniHookCommand = &cli.Command{
	Name:  "cni-hook",
	Usage: "an OCI hook that attaches a container to a CNI network (createRuntime: add, poststop: del)",
	Description: "Reads the OCI state on stdin. The network list is named by the annotation " +
		cni.AnnotationHookNetwork + "; " + cni.AnnotationIfName + ", " + cni.AnnotationArgs + " and " +
		cni.AnnotationCapabilities + " apply as for the built-in path. Without an argument the " +
		"state's status decides: creating or created: add, stopped: del.",
	ArgsUsage: "[add|del]",
	Action: func(ctx context.Context, cmd *cli.Command) error {
		if cmd.Args().Len() > 1 {
			return fmt.Errorf("cni-hook: takes at most one argument, add or del (got %d)", cmd.Args().Len())
		}
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fmt.Errorf("cni-hook: read the OCI state on stdin: %w", err)
		}
		var st specs.State
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("cni-hook: OCI state on stdin: %w", err)
		}
		return cni.Hook(ctx, cmd.Args().First(), &st, cniOptions(cmd))
	},
}
