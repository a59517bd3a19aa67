package main

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v3"
)

// commandsFor keeps only the command the arguments name, skipping global
// flags and their values; anything else keeps them all.
func TestCommandsFor(t *testing.T) {
	run := &cli.Command{Name: "run"}
	state := &cli.Command{Name: "state"}
	app := &cli.Command{
		Name: "husk",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root"},
			&cli.StringFlag{Name: "log"},
			&cli.BoolFlag{Name: "debug"},
		},
		Commands: []*cli.Command{run, state},
	}
	for _, tc := range []struct {
		args []string
		want []*cli.Command
	}{
		{[]string{"husk", "run", "x"}, []*cli.Command{run}},
		{[]string{"husk", "--root", "run", "state", "x"}, []*cli.Command{state}},
		{[]string{"husk", "--root=/r", "--debug", "run", "x"}, []*cli.Command{run}},
		{[]string{"husk", "-root", "/r", "--log", "l", "state"}, []*cli.Command{state}},
		{[]string{"husk", "--debug", "state"}, []*cli.Command{state}},
		{[]string{"husk"}, []*cli.Command{run, state}},
		{[]string{"husk", "--help"}, []*cli.Command{run, state}},
		{[]string{"husk", "help", "run"}, []*cli.Command{run, state}},
		{[]string{"husk", "nosuch", "run"}, []*cli.Command{run, state}},
		{[]string{"husk", "--", "run"}, []*cli.Command{run, state}},
		{[]string{"husk", "--root"}, []*cli.Command{run, state}},
	} {
		if got := commandsFor(app, tc.args); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %d commands, want %d", tc.args, len(got), len(tc.want))
		}
	}
}
