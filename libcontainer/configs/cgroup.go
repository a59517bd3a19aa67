package configs

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	systemdDbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
	"github.com/opencontainers/cgroups"
	devcfg "github.com/opencontainers/cgroups/devices/config"
)

// Cgroup is where the container's cgroups are and what they limit, from
// linux.cgroupsPath and linux.resources. A nil Config.Cgroup means neither
// was given: the default path, no limits, the default device rules.
//
// The limits are the cgroup library's own Resources (as in runc's
// config): specconv converts config.json into them once, and the cgroup
// managers apply them as they are.
type Cgroup struct {
	// Path is linux.cgroupsPath, cleaned, for the cgroupfs driver:
	// absolute (from the root of every hierarchy), relative (to husk's own
	// cgroup) or empty (<id>, relative, as runc takes it).
	Path string `json:"path,omitempty"`
	// Systemd is set for the systemd driver (--systemd-cgroup); the unit
	// is then Parent (a slice) and ScopePrefix-Name.scope, from a
	// "slice:prefix:name" cgroupsPath.
	Systemd     bool   `json:"systemd,omitempty"`
	Parent      string `json:"parent,omitempty"`
	ScopePrefix string `json:"scope_prefix,omitempty"`
	Name        string `json:"name,omitempty"`
	// UserSystemd: the unit is asked of the caller's own systemd
	// (user@UID.service) over its session bus, for a rootless caller.
	UserSystemd bool `json:"user_systemd,omitempty"`
	// SystemdProps are the org.systemd.property.* annotations, as
	// "Name=value" texts in systemd's syntax.
	SystemdProps map[string]string `json:"systemd_props,omitempty"`

	Resources Resources `json:"resources"`
	// KernelMemoryTCP is memory.kernelTCP, bytes (-1 unlimited): v1's
	// memory.kmem.tcp.limit_in_bytes, which the library does not write.
	KernelMemoryTCP int64 `json:"kernel_memory_tcp,omitempty"`
}

// Resources are the limits of linux.resources: the library's type.
type Resources = cgroups.Resources

// DeviceRule allows or denies access to devices: the library's type.
// Type is 'a' (all), 'c' or 'b'; Permissions a subset of "rwm".
type DeviceRule = devcfg.Rule

// Wildcard as a device rule's major or minor matches every number.
const Wildcard int64 = devcfg.Wildcard

// DefaultDeviceRules are appended after the rules of linux.resources, as
// runc does, and are runc's (its AllowedDevices), in runc's order: mknod
// of any node (opening it is another matter), the OCI default devices,
// the pty devices and /dev/net/tun. Not /dev/console (5:1): the
// container's console is its pty, and a node it made as 5:1 would be the
// host's console.
func DefaultDeviceRules() []*DeviceRule {
	rw := func(major, minor int64) *DeviceRule {
		return &DeviceRule{Type: devcfg.CharDevice, Major: major, Minor: minor, Permissions: "rwm", Allow: true}
	}
	return []*DeviceRule{
		{Type: devcfg.CharDevice, Major: Wildcard, Minor: Wildcard, Permissions: "m", Allow: true},
		{Type: devcfg.BlockDevice, Major: Wildcard, Minor: Wildcard, Permissions: "m", Allow: true},
		rw(1, 3),          // /dev/null
		rw(1, 8),          // /dev/random
		rw(1, 7),          // /dev/full
		rw(5, 0),          // /dev/tty
		rw(1, 5),          // /dev/zero
		rw(1, 9),          // /dev/urandom
		rw(136, Wildcard), // /dev/pts/*
		rw(5, 2),          // /dev/ptmx
		rw(10, 200),       // /dev/net/tun
	}
}

// CgroupConfig is c's cgroup settings, the defaults when it has none.
func (c *Config) CgroupConfig() *Cgroup {
	if c.Cgroup != nil {
		return c.Cgroup
	}
	return &Cgroup{Resources: Resources{Devices: DefaultDeviceRules()}}
}

// SystemdProperties converts the org.systemd.property.* annotations (see
// Cgroup.SystemdProps) into D-Bus properties, as runc does: the value in
// D-Bus's text syntax ("uint64 100", "true", "'text'"), and a NAMESec
// property given in seconds becomes NAMEUSec in microseconds.
func SystemdProperties(props map[string]string) ([]systemdDbus.Property, error) {
	var out []systemdDbus.Property
	for _, name := range slices.Sorted(maps.Keys(props)) {
		field := fmt.Sprintf("annotations[%q]", "org.systemd.property."+name)
		v, err := dbus.ParseVariant(props[name], dbus.Signature{})
		if err != nil {
			return nil, fmt.Errorf("%s: %q: not a D-Bus value: %w", field, props[name], err)
		}
		if strings.HasSuffix(name, "Sec") {
			sec, err := seconds(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", field, props[name], err)
			}
			name, v = strings.TrimSuffix(name, "Sec")+"USec", dbus.MakeVariant(sec)
		}
		out = append(out, systemdDbus.Property{Name: name, Value: v})
	}
	return out, nil
}

// seconds is a time in seconds as systemd's microseconds.
func seconds(v dbus.Variant) (uint64, error) {
	switch s := v.Value().(type) {
	case float64:
		if s >= 0 {
			return uint64(s * 1e6), nil
		}
	case int32:
		if s >= 0 {
			return uint64(s) * 1e6, nil
		}
	case int64:
		if s >= 0 {
			return uint64(s) * 1e6, nil
		}
	case uint32:
		return uint64(s) * 1e6, nil
	case uint64:
		return s * 1e6, nil
	}
	return 0, fmt.Errorf("a ...Sec property wants a number of seconds, not %s", v.Signature())
}
