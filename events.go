package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v3"
)

var eventsCommand = &cli.Command{
	Name:      "events",
	Usage:     "print a container's statistics and OOM events as JSON lines",
	ArgsUsage: "<container-id>",
	Flags: []cli.Flag{
		&cli.BoolFlag{Name: "stats", Usage: "print the statistics once and exit"},
		&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "time between statistics"},
	},
	Action: func(ctx context.Context, cmd *cli.Command) error {
		id, err := exactlyID(cmd)
		if err != nil {
			return err
		}
		interval := cmd.Duration("interval")
		if interval <= 0 {
			return fmt.Errorf("events --interval: %s must be positive", interval)
		}
		c, err := libcontainer.Load(cmd.Root().String("root"), id)
		if err != nil {
			return err
		}
		// Not held while events runs: kill, delete and the rest go on.
		c.Close()
		if err := c.Check(libcontainer.OpEvents); err != nil {
			return err
		}
		out := json.NewEncoder(os.Stdout)
		if cmd.Bool("stats") {
			return printStats(out, c)
		}
		return followEvents(out, c, interval)
	},
}

// event is one line of events' output, in runc's shape.
type event struct {
	Type string `json:"type"` // "stats" or "oom"
	ID   string `json:"id"`
	Data any    `json:"data,omitempty"`
}

func printStats(out *json.Encoder, c *libcontainer.Container) error {
	st, err := c.Stats()
	if err != nil {
		return err
	}
	return out.Encode(event{Type: "stats", ID: c.ID, Data: st})
}

// followEvents prints the statistics every interval and each OOM as it
// happens, until the container stops.
func followEvents(out *json.Encoder, c *libcontainer.Container, interval time.Duration) error {
	resumeGC() // runs as long as the container
	stop := make(chan struct{})
	defer close(stop)
	ooms, err := c.NotifyOOM(stop)
	if err != nil {
		logrus.Warnf("events: no OOM events: %v", err)
	}
	stats := time.NewTicker(interval)
	defer stats.Stop()
	alive := time.NewTicker(200 * time.Millisecond)
	defer alive.Stop()
	if err := printStats(out, c); err != nil {
		return err
	}
	for {
		select {
		case _, ok := <-ooms:
			if !ok {
				ooms = nil // the cgroup is gone; the liveness check ends us
				continue
			}
			if err := out.Encode(event{Type: "oom", ID: c.ID}); err != nil {
				return err
			}
		case <-stats.C:
			if err := printStats(out, c); err != nil {
				if c.Status() == libcontainer.Stopped {
					return nil
				}
				return err
			}
		case <-alive.C:
			if c.Status() == libcontainer.Stopped {
				return lastOOMs(out, c.ID, ooms)
			}
		}
	}
}

// lastOOMs prints the OOMs still on their way once the container has
// stopped (its init may have been the one killed).
func lastOOMs(out *json.Encoder, id string, ooms <-chan struct{}) error {
	grace := time.After(100 * time.Millisecond)
	for {
		select {
		case _, ok := <-ooms:
			if !ok {
				return nil
			}
			if err := out.Encode(event{Type: "oom", ID: id}); err != nil {
				return err
			}
		case <-grace:
			return nil
		}
	}
}
