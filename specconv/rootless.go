package specconv

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// ToRootless turns s (a spec from Example) into the spec `husk spec
// --rootless` writes, as `runc spec --rootless` does: a new user namespace
// in which uid and gid 0 are the caller's host ids (one id each, which
// needs no newuidmap), no network namespace (an unprivileged user cannot
// wire one up), /sys bound from the host (sysfs cannot be mounted without
// owning the network namespace), no uid=/gid= mount options (ids that may
// not be mapped), and no cgroup limits (the user may not own a cgroup).
func ToRootless(s *specs.Spec, uid, gid uint32) {
	if s.Linux == nil {
		s.Linux = &specs.Linux{}
	}
	l := s.Linux
	l.Namespaces = slices.DeleteFunc(l.Namespaces, func(ns specs.LinuxNamespace) bool {
		return ns.Type == specs.NetworkNamespace || ns.Type == specs.UserNamespace
	})
	l.Namespaces = append(l.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
	l.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uid, Size: 1}}
	l.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: gid, Size: 1}}
	l.Resources = nil

	for i := range s.Mounts {
		m := &s.Mounts[i]
		if filepath.Clean(m.Destination) == "/sys" {
			*m = specs.Mount{
				Destination: "/sys",
				Type:        "none",
				Source:      "/sys",
				Options:     []string{"rbind", "nosuid", "noexec", "nodev", "ro"},
			}
			continue
		}
		m.Options = slices.DeleteFunc(m.Options, func(o string) bool {
			return strings.HasPrefix(o, "uid=") || strings.HasPrefix(o, "gid=")
		})
	}
}
