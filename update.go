package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer"
	"github.com/husk-runtime/husk/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v3"
)

// updateFlags are runc's, each a field of linux.resources. Sizes take a
// unit (32m, 1g); -1 means no limit where the field allows it.
var updateFlags = []struct {
	name, usage string
	set         func(r *specs.LinuxResources, v string) error
}{
	{"memory", "memory limit in bytes (units allowed: 32m)", func(r *specs.LinuxResources, v string) error {
		return setSize(v, &mem(r).Limit)
	}},
	{"memory-reservation", "memory soft limit in bytes", func(r *specs.LinuxResources, v string) error {
		return setSize(v, &mem(r).Reservation)
	}},
	{"memory-swap", "memory plus swap limit in bytes; -1 for unlimited swap", func(r *specs.LinuxResources, v string) error {
		return setSize(v, &mem(r).Swap)
	}},
	{"kernel-memory", "ignored (the kernel has no separate kernel memory limit)", func(r *specs.LinuxResources, v string) error {
		return setSize(v, &mem(r).Kernel)
	}},
	{"kernel-memory-tcp", "ignored (the kernel has no separate kernel TCP limit)", func(r *specs.LinuxResources, v string) error {
		return setSize(v, &mem(r).KernelTCP)
	}},
	{"cpu-share", "CPU shares (relative weight)", func(r *specs.LinuxResources, v string) error {
		return setUint(v, &cpuRes(r).Shares)
	}},
	{"cpu-period", "CPU CFS period in µs", func(r *specs.LinuxResources, v string) error {
		return setUint(v, &cpuRes(r).Period)
	}},
	{"cpu-quota", "CPU CFS quota in µs per period; -1 for none", func(r *specs.LinuxResources, v string) error {
		return setInt(v, &cpuRes(r).Quota)
	}},
	{"cpu-burst", "CPU CFS burst in µs", func(r *specs.LinuxResources, v string) error {
		return setUint(v, &cpuRes(r).Burst)
	}},
	{"cpu-rt-period", "CPU realtime period in µs", func(r *specs.LinuxResources, v string) error {
		return setUint(v, &cpuRes(r).RealtimePeriod)
	}},
	{"cpu-rt-runtime", "CPU realtime runtime in µs per period", func(r *specs.LinuxResources, v string) error {
		return setInt(v, &cpuRes(r).RealtimeRuntime)
	}},
	{"cpu-idle", "1 to schedule the container as SCHED_IDLE", func(r *specs.LinuxResources, v string) error {
		return setInt(v, &cpuRes(r).Idle)
	}},
	{"cpuset-cpus", "CPUs to use (0-3,5)", func(r *specs.LinuxResources, v string) error {
		cpuRes(r).Cpus = v
		return nil
	}},
	{"cpuset-mems", "memory nodes to use (0-1)", func(r *specs.LinuxResources, v string) error {
		cpuRes(r).Mems = v
		return nil
	}},
	{"pids-limit", "maximum number of processes; -1 for none", func(r *specs.LinuxResources, v string) error {
		if r.Pids == nil {
			r.Pids = &specs.LinuxPids{}
		}
		return setInt(v, &r.Pids.Limit)
	}},
	{"blkio-weight", "block I/O weight, 10 to 1000", func(r *specs.LinuxResources, v string) error {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			return err
		}
		if r.BlockIO == nil {
			r.BlockIO = &specs.LinuxBlockIO{}
		}
		w := uint16(n)
		r.BlockIO.Weight = &w
		return nil
	}},
}

func mem(r *specs.LinuxResources) *specs.LinuxMemory {
	if r.Memory == nil {
		r.Memory = &specs.LinuxMemory{}
	}
	return r.Memory
}

func cpuRes(r *specs.LinuxResources) *specs.LinuxCPU {
	if r.CPU == nil {
		r.CPU = &specs.LinuxCPU{}
	}
	return r.CPU
}

func setInt(v string, dst **int64) error {
	n, err := strconv.ParseInt(v, 10, 64)
	*dst = &n
	return err
}

func setUint(v string, dst **uint64) error {
	n, err := strconv.ParseUint(v, 10, 64)
	*dst = &n
	return err
}

func setSize(v string, dst **int64) error {
	n, err := parseSize(v)
	*dst = &n
	return err
}

// parseSize reads a byte count with an optional binary unit: 1024, 512k,
// 32m, 32MiB, 1g, 1GB; -1 is "no limit".
func parseSize(s string) (int64, error) {
	if s == "-1" {
		return -1, nil
	}
	num := strings.TrimRight(strings.ToLower(s), "ib")
	shift := 0
	if num != "" {
		switch num[len(num)-1] {
		case 'k':
			shift = 10
		case 'm':
			shift = 20
		case 'g':
			shift = 30
		case 't':
			shift = 40
		}
		if shift > 0 {
			num = num[:len(num)-1]
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("invalid size %q (want bytes, optionally with k, m, g or t)", s)
	}
	return n << shift, nil
}

func updateCommandFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: "a JSON file of linux.resources to apply, - for stdin"},
		&cli.StringFlag{Name: "l3-cache-schema", Usage: "not supported (Intel RDT)"},
		&cli.StringFlag{Name: "mem-bw-schema", Usage: "not supported (Intel RDT)"},
	}
	for _, f := range updateFlags {
		sf := &cli.StringFlag{Name: f.name, Usage: f.usage}
		if f.name == "cpu-share" {
			sf.Aliases = []string{"cpu-shares"}
		}
		flags = append(flags, sf)
	}
	return flags
}

var updateCommand = &cli.Command{
	Name:      "update",
	Usage:     "change the cgroup limits of a running container",
	ArgsUsage: "<container-id>",
	Flags:     updateCommandFlags(),
	Action: func(ctx context.Context, cmd *cli.Command) error {
		id, err := exactlyID(cmd)
		if err != nil {
			return err
		}
		if err := notSupported(cmd, "l3-cache-schema", "mem-bw-schema"); err != nil {
			return err
		}
		r, err := updateResources(cmd)
		if err != nil {
			return err
		}
		c, err := libcontainer.Load(cmd.Root().String("root"), id)
		if err != nil {
			return err
		}
		defer c.Close()
		next, warnings, err := specconv.UpdateResources(c.Resources(), r)
		if err != nil {
			return fmt.Errorf("update: %w: %w", libcontainer.ErrInvalidConfig, err)
		}
		for _, w := range warnings {
			logrus.Warn("update: " + w)
		}
		return c.Update(next)
	},
}

// updateResources is what update changes: --resources, then the flags on
// top of it.
func updateResources(cmd *cli.Command) (*specs.LinuxResources, error) {
	r := &specs.LinuxResources{}
	if path := cmd.String("resources"); path != "" {
		var data []byte
		var err error
		if path == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, fmt.Errorf("update --resources: %w", err)
		}
		if err := json.Unmarshal(data, r); err != nil {
			return nil, fmt.Errorf("update --resources %s: %w", path, err)
		}
	}
	for _, f := range updateFlags {
		if !cmd.IsSet(f.name) {
			continue
		}
		if err := f.set(r, cmd.String(f.name)); err != nil {
			return nil, fmt.Errorf("update --%s %q: %w", f.name, cmd.String(f.name), err)
		}
	}
	return r, nil
}
