package specconv

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// netDevices sets linux.netDevices: host devices to move into the
// container's network namespace.
func (c *converter) netDevices() error {
	devs := c.linux().NetDevices
	if len(devs) == 0 {
		return nil
	}
	if _, ok := c.cfg.Namespace(configs.NEWNET); !ok {
		return fieldErrorf("linux.netDevices", `needs a "network" namespace in linux.namespaces: moving devices into the host's would be a no-op`)
	}
	taken := map[string]string{}
	c.cfg.NetDevices = map[string]configs.NetDevice{}
	for _, host := range slices.Sorted(maps.Keys(devs)) {
		field := fmt.Sprintf("linux.netDevices[%q]", host)
		if err := checkIfName(host); err != nil {
			return fieldErrorf(field, "host device name: %v", err)
		}
		name := devs[host].Name
		if name != "" {
			if err := checkIfName(name); err != nil {
				return fieldErrorf(field+".name", "%v", err)
			}
		}
		inside := name
		if inside == "" {
			inside = host
		}
		if other, dup := taken[inside]; dup {
			return fieldErrorf(field, "%q is also the name of %q in the container", inside, other)
		}
		taken[inside] = host
		c.cfg.NetDevices[host] = configs.NetDevice{Name: name}
	}
	return nil
}

// checkIfName checks a network interface name as the kernel does
// (dev_valid_name): 1 to 15 bytes, not "." or "..", no '/', ':' or space.
func checkIfName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("must not be empty")
	case len(name) > 15:
		return fmt.Errorf("%q is longer than 15 bytes", name)
	case name == "." || name == "..":
		return fmt.Errorf("%q is not a valid name", name)
	case strings.ContainsAny(name, "/: \t\n\r\v\f"):
		return fmt.Errorf("%q contains '/', ':' or white space", name)
	}
	return nil
}
