package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
)

var listCommand = &cli.Command{
	Name:  "list",
	Usage: "list containers",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table or json"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the ids"},
	},
	Action: func(ctx context.Context, cmd *cli.Command) error {
		root := cmd.Root().String("root")
		// As runc (1.2 on): a --root given that does not exist is an
		// error (a typo must not look like "no containers"); the default
		// one is not: no container was made yet.
		if _, err := os.Stat(root); err != nil && rootGiven(cmd) {
			return fmt.Errorf("list: --root %s: %w", root, err)
		}
		list, err := libcontainer.List(root)
		if err != nil {
			return err
		}
		if cmd.Bool("quiet") {
			for _, s := range list {
				fmt.Println(s.ID)
			}
			return nil
		}
		switch f := cmd.String("format"); f {
		case "json":
			if list == nil {
				list = []libcontainer.Summary{}
			}
			return json.NewEncoder(os.Stdout).Encode(list)
		case "table":
			w := tabwriter.NewWriter(os.Stdout, 12, 1, 3, ' ', 0)
			fmt.Fprint(w, "ID\tPID\tSTATUS\tBUNDLE\tCREATED\tOWNER\n")
			for _, s := range list {
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", s.ID, s.Pid, s.Status, s.Bundle, s.Created.Format(time.RFC3339Nano), s.Owner)
			}
			return w.Flush()
		default:
			return fmt.Errorf("list --format: unknown %q (table or json)", f)
		}
	},
}
