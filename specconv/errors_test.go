package specconv

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// addNS adds namespaces to the example's list.
func addNS(s *specs.Spec, nss ...specs.LinuxNamespace) {
	s.Linux.Namespaces = append(s.Linux.Namespaces, nss...)
}

func TestConvertErrors(t *testing.T) {
	for _, tc := range []struct {
		want        string // the whole error
		edit        func(s *specs.Spec)
		unsupported bool // wraps ErrNotSupported
	}{
		// ociVersion
		{want: `ociVersion: "banana" is not a SemVer 2.0.0 version (MAJOR.MINOR.PATCH)`, edit: func(s *specs.Spec) { s.Version = "banana" }},
		{want: `ociVersion: "1.0" is not a SemVer 2.0.0 version (MAJOR.MINOR.PATCH)`, edit: func(s *specs.Spec) { s.Version = "1.0" }},
		{want: `ociVersion: "2.0.0" has major version 2: husk reads runtime-spec 1.x bundles only (it implements ` + specs.Version + `)`, edit: func(s *specs.Spec) { s.Version = "2.0.0" }},
		{want: `ociVersion: "0.9.0" has major version 0: husk reads runtime-spec 1.x bundles only (it implements ` + specs.Version + `)`, edit: func(s *specs.Spec) { s.Version = "0.9.0" }},
		{want: `ociVersion: missing: want the runtime-spec version the bundle was written for, e.g. "1.0.2"`, edit: func(s *specs.Spec) { s.Version = "" }},

		// process
		{want: "process: missing", edit: func(s *specs.Spec) { s.Process = nil }},
		{want: "process.args: must not be empty", edit: func(s *specs.Spec) { s.Process.Args = nil }},
		{want: "process.args[0]: must not be empty", edit: func(s *specs.Spec) { s.Process.Args = []string{"", "x"} }},
		{want: `process.cwd: must be absolute, got "tmp"`, edit: func(s *specs.Spec) { s.Process.Cwd = "tmp" }},
		{want: `process.cwd: must be absolute, got ""`, edit: func(s *specs.Spec) { s.Process.Cwd = "" }},
		{want: `process.env[1]: want NAME=VALUE, got "FOO"`, edit: func(s *specs.Spec) { s.Process.Env[1] = "FOO" }},
		{want: `process.env[0]: want NAME=VALUE, got "=x"`, edit: func(s *specs.Spec) { s.Process.Env[0] = "=x" }},
		{want: "process.user.umask: must be at most 0777, got 01000", edit: func(s *specs.Spec) { s.Process.User.Umask = ptr(uint32(0o1000)) }},
		{want: "process.user.uid: 4294967295: uids and gids must be in range 0-2147483647", edit: func(s *specs.Spec) { s.Process.User.UID = 4294967295 }},
		{want: "process.user.gid: 2147483648: uids and gids must be in range 0-2147483647", edit: func(s *specs.Spec) { s.Process.User.GID = 2147483648 }},
		{want: "process.user.additionalGids[1]: 4294967294: uids and gids must be in range 0-2147483647", edit: func(s *specs.Spec) { s.Process.User.AdditionalGids = []uint32{1, 4294967294} }},
		{want: "process.oomScoreAdj: must be between -1000 and 1000, got 1001", edit: func(s *specs.Spec) { s.Process.OOMScoreAdj = ptr(1001) }},
		{want: `process.rlimits[0].type: unknown "RLIMIT_FOO"`, edit: func(s *specs.Spec) { s.Process.Rlimits[0].Type = "RLIMIT_FOO" }},
		{want: `process.rlimits[1].type: duplicate "RLIMIT_NOFILE"`, edit: func(s *specs.Spec) {
			s.Process.Rlimits = append(s.Process.Rlimits, s.Process.Rlimits[0])
		}},
		{want: "process.rlimits[0]: RLIMIT_NOFILE soft limit 2048 is above the hard limit 1024", edit: func(s *specs.Spec) { s.Process.Rlimits[0].Soft = 2048 }},

		// root
		{want: "root: missing", edit: func(s *specs.Spec) { s.Root = nil }},
		{want: "root.path: must not be empty", edit: func(s *specs.Spec) { s.Root.Path = "" }},

		// linux and namespaces
		{want: "linux: missing", edit: func(s *specs.Spec) { s.Linux = nil }},
		{want: `linux.namespaces[2].type: unknown "netwrk"`, edit: func(s *specs.Spec) { s.Linux.Namespaces[2].Type = "netwrk" }},
		{want: `linux.namespaces[0].type: unknown ""`, edit: func(s *specs.Spec) { s.Linux.Namespaces[0].Type = "" }},
		{want: `linux.namespaces[5]: duplicate "pid" namespace`, edit: func(s *specs.Spec) { addNS(s, specs.LinuxNamespace{Type: "pid", Path: "/proc/1/ns/pid"}) }},
		{want: `linux.namespaces[1].path: must be absolute, got "x"`, edit: func(s *specs.Spec) { s.Linux.Namespaces[1].Path = "x" }},
		{want: `linux.maskedPaths: cannot mask "/proc/acpi" without a new mount namespace`, edit: func(s *specs.Spec) {
			s.Linux.Namespaces = s.Linux.Namespaces[:4]
		}},
		{want: `linux.readonlyPaths: cannot make "/proc/bus" read-only without a new mount namespace`, edit: func(s *specs.Spec) {
			s.Linux.Namespaces = s.Linux.Namespaces[:4]
			s.Linux.MaskedPaths = nil
		}},

		// hostname and domainname
		{want: `hostname: needs a new uts namespace to set "husk"`, edit: func(s *specs.Spec) { s.Linux.Namespaces[3].Type = "cgroup" }},
		{want: `domainname: needs a new uts namespace to set "example.org"`, edit: func(s *specs.Spec) {
			s.Hostname, s.Domainname = "", "example.org"
			s.Linux.Namespaces[3].Type = "cgroup"
		}},

		// user namespace mappings
		{want: `linux.uidMappings: needs a "user" namespace in linux.namespaces`, edit: func(s *specs.Spec) {
			s.Linux.UIDMappings = []specs.LinuxIDMapping{{HostID: 1000, Size: 1}}
		}},
		{want: `linux.gidMappings: needs a "user" namespace in linux.namespaces`, edit: func(s *specs.Spec) {
			s.Linux.GIDMappings = []specs.LinuxIDMapping{{HostID: 1000, Size: 1}}
		}},
		{want: "linux.uidMappings: missing, a new user namespace needs uid and gid mappings", edit: func(s *specs.Spec) {
			addNS(s, specs.LinuxNamespace{Type: "user"})
		}},
		{want: "linux.gidMappings: missing, a new user namespace needs uid and gid mappings", edit: func(s *specs.Spec) {
			addNS(s, specs.LinuxNamespace{Type: "user"})
			s.Linux.UIDMappings = []specs.LinuxIDMapping{{HostID: 1000, Size: 1}}
		}},
		{want: "linux.gidMappings[1].size: must not be 0", edit: func(s *specs.Spec) {
			addNS(s, specs.LinuxNamespace{Type: "user"})
			s.Linux.UIDMappings = []specs.LinuxIDMapping{{HostID: 1000, Size: 1}}
			s.Linux.GIDMappings = []specs.LinuxIDMapping{{HostID: 1000, Size: 1}, {ContainerID: 1, HostID: 2000}}
		}},
		{want: "linux.uidMappings[0]: hostID 4294967295 + size 2 is beyond the last id", edit: func(s *specs.Spec) {
			addNS(s, specs.LinuxNamespace{Type: "user"})
			s.Linux.UIDMappings = []specs.LinuxIDMapping{{HostID: 4294967295, Size: 2}}
			s.Linux.GIDMappings = []specs.LinuxIDMapping{{HostID: 1000, Size: 1}}
		}},

		// mounts
		{want: `mounts[0].destination: must not be empty`, edit: func(s *specs.Spec) { s.Mounts[0].Destination = "" }},
		{want: "mounts[7].source: must not be empty for a bind mount", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Type: "bind"})
		}},
		{want: `mounts[7].options[2]: "ridmap" with "idmap" (mounts[7].options[1]): choose one`, edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/srv", Options: []string{"rbind", "idmap", "ridmap"}})
		}},
		{want: `mounts[7].options[1]: an idmapped mount without uidMappings and gidMappings takes the container's user namespace's, and there is none`, edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/srv", Options: []string{"rbind", "ridmap"}})
		}},
		{want: `mounts[1].options[0]: an idmapped mount must be a bind mount: the kernel cannot idmap a new "tmpfs" mount from here`, edit: func(s *specs.Spec) {
			s.Mounts[1].Options = []string{"idmap"}
		}},
		{want: "mounts[7].uidMappings: uidMappings and gidMappings go together: both or neither", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/srv", Options: []string{"bind"},
				UIDMappings: []specs.LinuxIDMapping{{Size: 1}}})
		}},
		{want: "mounts[7].gidMappings[1]: hostID range 100005-100014 overlaps entry 0's 100000-100009", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/srv", Options: []string{"bind"},
				UIDMappings: []specs.LinuxIDMapping{{HostID: 100000, Size: 10}},
				GIDMappings: []specs.LinuxIDMapping{{HostID: 100000, Size: 10}, {ContainerID: 10, HostID: 100005, Size: 10}}})
		}},
		{want: "mounts[7].uidMappings[0]: hostID 4294967000 + size 1000 exceeds the id limit 4294967295", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/srv", Options: []string{"bind"},
				UIDMappings: []specs.LinuxIDMapping{{HostID: 4294967000, Size: 1000}},
				GIDMappings: []specs.LinuxIDMapping{{Size: 1}}})
		}},
		{want: "mounts[7].uidMappings[0].size: must not be 0", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Source: "/srv", Options: []string{"bind"},
				UIDMappings: []specs.LinuxIDMapping{{HostID: 1}}, GIDMappings: []specs.LinuxIDMapping{{Size: 1}}})
		}},

		// devices
		{want: `linux.devices[0].type: unknown "x", want "c", "b", "u" or "p"`, edit: func(s *specs.Spec) {
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/x", Type: "x"}}
		}},
		{want: `linux.devices[1].path: must be absolute, got "dev/fuse"`, edit: func(s *specs.Spec) {
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/a", Type: "c"}, {Path: "dev/fuse", Type: "c", Major: 10, Minor: 229}}
		}},
		{want: `linux.devices[1].path: duplicate "/dev/fuse/"`, edit: func(s *specs.Spec) {
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/fuse", Type: "c"}, {Path: "/dev/fuse/", Type: "c"}}
		}},
		{want: "linux.devices[0]: major and minor must not be negative, got -1:3", edit: func(s *specs.Spec) {
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/a", Type: "b", Major: -1, Minor: 3}}
		}},

		// paths, propagation, sysctl
		{want: `linux.maskedPaths[1]: must be absolute, got "proc/kcore"`, edit: func(s *specs.Spec) { s.Linux.MaskedPaths[1] = "proc/kcore" }},
		{want: `linux.readonlyPaths[0]: must be absolute, got ""`, edit: func(s *specs.Spec) { s.Linux.ReadonlyPaths[0] = "" }},
		{want: `linux.rootfsPropagation: unknown "recursive"`, edit: func(s *specs.Spec) { s.Linux.RootfsPropagation = "recursive" }},
		{want: `linux.sysctl: "vm.swappiness" is not namespaced, setting it would change the host`, edit: func(s *specs.Spec) {
			s.Linux.Sysctl = map[string]string{"vm.swappiness": "10", "net.core.somaxconn": "1024"}
		}},
		{want: `linux.sysctl: "net.core.somaxconn" needs a "network" namespace`, edit: func(s *specs.Spec) {
			s.Linux.Namespaces[1].Type = "cgroup"
			s.Linux.Sysctl = map[string]string{"net.core.somaxconn": "1024"}
		}},

		{want: `linux.sysctl: "kernel.hostname" conflicts with the "hostname" field: set the host name there`, edit: func(s *specs.Spec) {
			s.Linux.Sysctl = map[string]string{"kernel.hostname": "other"}
		}},
		{want: `linux.sysctl: "user.max_user_namespaces" needs a "user" namespace`, edit: func(s *specs.Spec) {
			s.Linux.Sysctl = map[string]string{"user.max_user_namespaces": "0"}
		}},

		// time namespace
		{want: `linux.timeOffsets: needs a new "time" namespace in linux.namespaces`, edit: func(s *specs.Spec) {
			s.Linux.TimeOffsets = map[string]specs.LinuxTimeOffset{"monotonic": {Secs: 1}}
		}},
		{want: `linux.timeOffsets: unknown clock "realtime", want ["monotonic" "boottime"]`, edit: func(s *specs.Spec) {
			addNS(s, specs.LinuxNamespace{Type: "time"})
			s.Linux.TimeOffsets = map[string]specs.LinuxTimeOffset{"realtime": {Secs: 1}}
		}},
		{want: "linux.timeOffsets.boottime.nanosecs: must be below 1000000000, got 1000000000", edit: func(s *specs.Spec) {
			addNS(s, specs.LinuxNamespace{Type: "time"})
			s.Linux.TimeOffsets = map[string]specs.LinuxTimeOffset{"boottime": {Nanosecs: 1e9}}
		}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			c, _, err := Convert(withSpec(tc.edit), Options{Bundle: bundle})
			if err == nil {
				t.Fatalf("Convert = %s, want an error", dump(c))
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %v\nwant: %s", err, tc.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(tc.want, fe.Field+": ") {
				t.Errorf("error %#v is not a FieldError naming the field", err)
			}
			if got := errors.Is(err, ErrNotSupported); got != tc.unsupported {
				t.Errorf("errors.Is(err, ErrNotSupported) = %v, want %v", got, tc.unsupported)
			}
		})
	}
}

func TestConvertNeedsAbsoluteBundle(t *testing.T) {
	_, _, err := Convert(Example(), Options{Bundle: "bundles/b"})
	if want := `root.path: relative path "rootfs" needs an absolute bundle path, got "bundles/b"`; !contains(err, want) {
		t.Errorf("error %v, want %q", err, want)
	}
	s := withSpec(func(s *specs.Spec) {
		s.Root.Path = "/abs/rootfs"
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/d", Source: "data", Options: []string{"bind"}})
	})
	_, _, err = Convert(s, Options{})
	if want := `mounts[7].source: relative path "data" needs an absolute bundle path, got ""`; !contains(err, want) {
		t.Errorf("error %v, want %q", err, want)
	}
	if _, _, err := Convert(nil, Options{}); err == nil {
		t.Error("Convert(nil) gave no error")
	}
}
