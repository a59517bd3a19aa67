package launch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
)

// PlanSystem is what the launcher, the container's pid 1, sets of the
// container's namespaces (nsenter/system.c): host and domain names, and
// the sysctls, sorted by key (one order, whatever the map's).
func PlanSystem(cfg *configs.Config) (*bootstrap.PlanSystem, error) {
	s := &bootstrap.PlanSystem{Hostname: cfg.Hostname, Domainname: cfg.Domainname}
	if err := checkString("hostname", s.Hostname, bootstrap.PlanMaxName); err != nil {
		return nil, err
	}
	if err := checkString("domainname", s.Domainname, bootstrap.PlanMaxName); err != nil {
		return nil, err
	}
	if n := len(cfg.Sysctl); n > bootstrap.PlanMaxSysctls {
		return nil, fmt.Errorf("linux.sysctl: %d sysctls, over the %d husk takes", n, bootstrap.PlanMaxSysctls)
	}
	for k, v := range cfg.Sysctl {
		field := fmt.Sprintf("linux.sysctl[%q]", k)
		if k == "" {
			return nil, fmt.Errorf("%s: an empty key", field)
		}
		if err := checkString(field, k, bootstrap.PlanMaxSysctl); err != nil {
			return nil, err
		}
		if err := checkString(field+" value", v, bootstrap.PlanMaxSysctl); err != nil {
			return nil, err
		}
		s.Sysctls = append(s.Sysctls, bootstrap.PlanSysctl{Key: k, Value: v})
	}
	slices.SortFunc(s.Sysctls, func(a, b bootstrap.PlanSysctl) int { return strings.Compare(a.Key, b.Key) })
	return s, nil
}
