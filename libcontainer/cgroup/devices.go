package cgroup

import (
	"fmt"

	"github.com/opencontainers/cgroups"
	devcfg "github.com/opencontainers/cgroups/devices/config"
)

// The library leaves device rules to whoever registers these two hooks
// (its own implementation needs github.com/cilium/ebpf); husk's are below
// and in bpf.go. The rules start from "everything denied" and are applied
// in order, so a later rule overrides an earlier one.
func init() {
	cgroups.DevicesSetV1 = setDevicesV1
	cgroups.DevicesSetV2 = setDevicesV2
}

// setDevicesV1 writes the rules to a v1 devices cgroup: deny all, then
// each rule to devices.allow or devices.deny.
func setDevicesV1(dir string, r *cgroups.Resources) error {
	if r.SkipDevices {
		return nil
	}
	if err := cgroups.WriteFile(dir, "devices.deny", "a"); err != nil {
		return err
	}
	for _, rule := range r.Devices {
		file := "devices.deny"
		if rule.Allow {
			file = "devices.allow"
		}
		if err := cgroups.WriteFile(dir, file, v1Line(rule)); err != nil {
			return err
		}
	}
	return nil
}

// v1Line is rule as the v1 devices files take it. An all-devices rule is
// a bare "a": v1 cannot limit it to some access types.
func v1Line(rule *devcfg.Rule) string {
	if rule.Type == devcfg.WildcardDevice {
		return "a"
	}
	return rule.CgroupString()
}

// setDevicesV2 compiles the rules into an eBPF device program and attaches
// it to the unified cgroup dir, replacing the one attached before.
func setDevicesV2(dir string, r *cgroups.Resources) error {
	if r.SkipDevices {
		return nil
	}
	insns, err := deviceProgram(r.Devices)
	if err != nil {
		return err
	}
	if err := attachDeviceProgram(dir, insns); err != nil {
		return fmt.Errorf("device rules (eBPF) on %s: %w", dir, err)
	}
	return nil
}
