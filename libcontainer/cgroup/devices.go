package cgroup

import (
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootless"
	"github.com/opencontainers/cgroups"

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

// writeDeviceRules applies v1res's device rules to the v1 devices cgroup
// (the cgroupfs driver) in the listed order, as the runtime-spec says
// ("MUST apply entries in the listed order") and devices.list then shows:
// "a" to devices.deny first (nothing allowed), then each rule to
// devices.allow or devices.deny. The library's v1 writer cannot be given
// an order: it writes the smallest change from the cgroup's list to the
// rules' result, sorted. It still runs after this (v1res's rules are left
// to it): it finds nothing to change and checks the result against its
// own model of the rules, as it does after its own writes.
//
// Rules whose last "a" rule allows all (a deny list, which devices.list
// cannot show) are left to the library, as are the systemd driver's and a
// caller's in a user namespace (the library skips them there).
func (m *Manager) writeDeviceRules(v1res *cgroups.Resources) error {
	dir := m.v1Path("devices")
	if v1res.SkipDevices || dir == "" || m.systemd != "" || rootless.Self().InUserNS || allowsAll(v1res.Devices) {
		return nil
	}
	deny := &configs.DeviceRule{Type: 'a', Major: configs.Wildcard, Minor: configs.Wildcard, Permissions: "rwm"}
	for _, rule := range append([]*configs.DeviceRule{deny}, v1res.Devices...) {
		file := "devices.deny"
		if rule.Allow {
			file = "devices.allow"
		}
		if err := cgroups.WriteFile(dir, file, rule.CgroupString()); err != nil {
			return fmt.Errorf("%sdevices (husk's defaults after them): %s %q: %w", res, file, rule.CgroupString(), err)
		}
	}
	return nil
}

// allowsAll reports whether rules end allowing every device but those
// denied after: their last "a" rule is an allow.
func allowsAll(rules []*configs.DeviceRule) bool {
	all := false
	for _, r := range rules {
		if r.Type == 'a' {
			all = r.Allow
		}
	}
	return all
}
