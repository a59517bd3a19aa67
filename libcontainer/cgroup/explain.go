package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// show formats a field value for an error message.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", v)
}

// fileFields names the config.json field behind each cgroup file husk
// writes, v1 and v2.
var fileFields = map[string]string{
	"memory.limit_in_bytes":            "memory.limit",
	"memory.max":                       "memory.limit",
	"memory.soft_limit_in_bytes":       "memory.reservation",
	"memory.low":                       "memory.reservation",
	"memory.memsw.limit_in_bytes":      "memory.swap",
	"memory.swap.max":                  "memory.swap",
	"memory.swappiness":                "memory.swappiness",
	"memory.oom_control":               "memory.disableOOMKiller",
	"cpu.shares":                       "cpu.shares",
	"cpu.weight":                       "cpu.shares",
	"cpu.cfs_quota_us":                 "cpu.quota",
	"cpu.cfs_period_us":                "cpu.period",
	"cpu.max":                          "cpu.quota",
	"cpu.cfs_burst_us":                 "cpu.burst",
	"cpu.max.burst":                    "cpu.burst",
	"cpu.rt_runtime_us":                "cpu.realtimeRuntime",
	"cpu.rt_period_us":                 "cpu.realtimePeriod",
	"cpu.idle":                         "cpu.idle",
	"cpuset.cpus":                      "cpu.cpus",
	"cpuset.mems":                      "cpu.mems",
	"pids.max":                         "pids.limit",
	"blkio.weight":                     "blockIO.weight",
	"blkio.bfq.weight":                 "blockIO.weight",
	"io.weight":                        "blockIO.weight",
	"io.bfq.weight":                    "blockIO.weight",
	"blkio.leaf_weight":                "blockIO.leafWeight",
	"blkio.weight_device":              "blockIO.weightDevice",
	"blkio.bfq.weight_device":          "blockIO.weightDevice",
	"blkio.leaf_weight_device":         "blockIO.weightDevice",
	"blkio.throttle.read_bps_device":   "blockIO.throttleReadBpsDevice",
	"blkio.throttle.write_bps_device":  "blockIO.throttleWriteBpsDevice",
	"blkio.throttle.read_iops_device":  "blockIO.throttleReadIOPSDevice",
	"blkio.throttle.write_iops_device": "blockIO.throttleWriteIOPSDevice",
	"io.max":                           "blockIO",
	"net_cls.classid":                  "network.classID",
	"net_prio.ifpriomap":               "network.priorities",
	"rdma.max":                         "rdma",
	"devices.allow":                    "devices",
	"devices.deny":                     "devices",
	"freezer.state":                    "(freezer)",
	"cgroup.freeze":                    "(freezer)",
	"cgroup.procs":                     "(joining the cgroup)",
}

// explain words a failed write of the library with the config.json field
// (and value) of the file it wrote.
func explain(r *configs.Resources, err error) error {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", strings.TrimSuffix(res, "."), err)
	}
	file := filepath.Base(pe.Path)
	field, ok := fileFields[file]
	if !ok && strings.HasPrefix(file, "hugetlb.") {
		field, ok = "hugepageLimits", true
	}
	if !ok {
		if _, isUnified := r.Unified[file]; isUnified {
			return fmt.Errorf("%sunified[%q]: %q: %w", res, file, r.Unified[file], err)
		}
		return fmt.Errorf("%s: %w", strings.TrimSuffix(res, "."), err)
	}
	if strings.HasPrefix(field, "(") {
		return fmt.Errorf("%s %s: %w", strings.TrimSuffix(res, "."), field, err)
	}
	if v, ok := valueOf(r, field); ok {
		return fmt.Errorf("%s%s: %s: %w", res, field, show(v), err)
	}
	return fmt.Errorf("%s%s: %w", res, field, err)
}
