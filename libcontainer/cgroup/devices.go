package cgroup

import (
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	devcfg "github.com/opencontainers/cgroups/devices/config"

	// The library's device rules: on v1 the devices.allow/deny writes
	// that turn the cgroup's current list into the wanted one, on v2 an
	// eBPF program (made with cilium/ebpf) attached to the cgroup, on
	// systemd the DeviceAllow= properties. Importing it registers them
	// with the fs, fs2 and systemd managers. The rules start from
	// "everything denied" and apply in order: a later rule overrides an
	// earlier one.
	_ "github.com/opencontainers/cgroups/devices"
)

// deviceRules converts linux.resources.devices to the library's rules,
// checking each.
func deviceRules(rules []configs.DeviceRule) ([]*devcfg.Rule, error) {
	out := make([]*devcfg.Rule, 0, len(rules))
	for i, d := range rules {
		r := &devcfg.Rule{Type: devcfg.Type(d.Type), Major: d.Major, Minor: d.Minor, Permissions: devcfg.Permissions(d.Access), Allow: d.Allow}
		if !r.Type.CanCgroup() {
			return nil, fmt.Errorf("%sdevices[%d].type: %q: want a, b or c", res, i, string(d.Type))
		}
		if !r.Permissions.IsValid() || r.Permissions.IsEmpty() {
			return nil, fmt.Errorf("%sdevices[%d].access: %q: want letters of rwm", res, i, d.Access)
		}
		out = append(out, r)
	}
	return out, nil
}
