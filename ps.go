package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/urfave/cli/v3"
)

var psCommand = &cli.Command{
	Name:         "ps",
	Usage:        "list the processes of a container",
	ArgsUsage:    "<container-id> [ps options (default -ef)]",
	StopOnNthArg: intPtr(1),
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table (ps output) or json (the pids)"},
	},
	Action: func(ctx context.Context, cmd *cli.Command) error {
		id, err := containerID(cmd)
		if err != nil {
			return err
		}
		format := cmd.String("format")
		if format != "table" && format != "json" {
			return fmt.Errorf("ps --format: unknown %q (table or json)", format)
		}
		c, err := libcontainer.Load(cmd.Root().String("root"), id)
		if err != nil {
			return err
		}
		pids, err := c.Pids()
		c.Close()
		if err != nil {
			return err
		}
		if format == "json" {
			if pids == nil {
				pids = []int{}
			}
			return json.NewEncoder(os.Stdout).Encode(pids)
		}
		psArgs := cmd.Args().Slice()[1:]
		if len(psArgs) == 0 {
			psArgs = []string{"-ef"}
		}
		return psTable(pids, psArgs)
	},
}

// psTable runs the host's ps with args and prints its header and the
// lines of pids, found by ps's PID column.
func psTable(pids []int, args []string) error {
	out, err := exec.Command("ps", args...).Output()
	if err != nil {
		return fmt.Errorf("ps %s: %w", strings.Join(args, " "), err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	if !sc.Scan() {
		return fmt.Errorf("ps %s: no output", strings.Join(args, " "))
	}
	header := sc.Text()
	col := slices.Index(strings.Fields(header), "PID")
	if col < 0 {
		return fmt.Errorf("ps %s: no PID column in %q", strings.Join(args, " "), header)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintln(w, header)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) <= col {
			continue
		}
		if pid, err := strconv.Atoi(fields[col]); err == nil && slices.Contains(pids, pid) {
			fmt.Fprintln(w, sc.Text())
		}
	}
	return sc.Err()
}
