package specconv

import (
	"slices"

	"github.com/husk-runtime/husk/libcontainer/caps"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
)

// Features is the part of the OCI features document (`husk features`)
// that follows from what this package accepts, made from the same tables
// the conversion checks against. The caller adds what only the host can
// tell (AppArmor, SELinux, which seccomp architectures libseccomp knows).
func Features() *features.Features {
	yes := true
	f := &features.Features{
		// The annotations of config.json that this package acts on; the
		// caller adds the others (a value ending in "." is a prefix).
		PotentiallyUnsafeConfigAnnotations: []string{systemdPropPrefix},
		OCIVersionMin:                      "1.0.0",
		OCIVersionMax:                      specs.Version,
		MountOptions:                       MountOptions(),
		Linux: &features.Linux{
			Capabilities: caps.Names(),
			// --systemd-cgroup: a transient scope on the system bus, or on
			// the user's session bus for a caller without root.
			Cgroup: &features.Cgroup{V1: &yes, V2: &yes, Systemd: &yes, SystemdUser: &yes, Rdma: &yes},
			Seccomp: &features.Seccomp{
				Enabled:        &yes,
				Actions:        names(seccompActions),
				Operators:      names(seccompOps),
				Archs:          names(seccompArchs),
				KnownFlags:     names(seccompFlags),
				SupportedFlags: names(seccompFlags),
			},
			MemoryPolicy:    &features.MemoryPolicy{Modes: names(mapKeys(mpolModes)), Flags: names(mapKeys(mpolFlags))},
			MountExtensions: &features.MountExtensions{IDMap: &features.IDMap{Enabled: &yes}},
			NetDevices:      &features.NetDevices{Enabled: &yes},
		},
	}
	for _, k := range configs.HookKinds() {
		f.Hooks = append(f.Hooks, string(k))
	}
	for _, t := range configs.NamespaceTypes() {
		f.Linux.Namespaces = append(f.Linux.Namespaces, string(t))
	}
	slices.Sort(f.Linux.Namespaces)
	return f
}

// names turns a list of string-typed spec names into sorted strings.
func names[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	slices.Sort(out)
	return out
}

func mapKeys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
