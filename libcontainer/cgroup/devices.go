package cgroup

import (
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"

	// The library's device rules: on v1 the devices.allow/deny writes
	// that turn the cgroup's current list into the wanted one, on v2 an
	// eBPF program (made with cilium/ebpf) attached to the cgroup, on
	// systemd the DeviceAllow= properties. Importing it registers them
	// with the fs, fs2 and systemd managers. The rules start from
	// "everything denied" and apply in order: a later rule overrides an
	// earlier one.
	_ "github.com/opencontainers/cgroups/devices"
)

// checkDeviceRules checks each rule as the library needs it (specconv
// makes them so; a config from elsewhere may not be).
func checkDeviceRules(rules []*configs.DeviceRule) error {
	for i, r := range rules {
		if !r.Type.CanCgroup() {
			return fmt.Errorf("%sdevices[%d].type: %q: want a, b or c", res, i, string(r.Type))
		}
		if !r.Permissions.IsValid() || r.Permissions.IsEmpty() {
			return fmt.Errorf("%sdevices[%d].access: %q: want letters of rwm", res, i, r.Permissions)
		}
	}
	return nil
}
