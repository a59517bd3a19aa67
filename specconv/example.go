package specconv

import "github.com/opencontainers/runtime-spec/specs-go"

// Example returns the spec `husk spec` writes: runc's default (`runc
// spec`), field by field, with husk's hostname, the runtime-spec version
// husk implements, two more masked paths newer runc releases mask too,
// and no ambient set: runc 1.1's has one, which without an inheritable set
// cannot be raised (husk refuses that; runc 1.1 ignored it silently).
func Example() *specs.Spec {
	// Functions, not shared slices: a caller may edit one list of many.
	defaultCaps := func() []string { return []string{"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"} }
	noSuidExecDev := func(more ...string) []string { return append([]string{"nosuid", "noexec", "nodev"}, more...) }
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "rootfs", Readonly: true},
		Process: &specs.Process{
			Terminal: true,
			User:     specs.User{UID: 0, GID: 0},
			Args:     []string{"sh"},
			Env: []string{
				"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				"TERM=xterm",
			},
			Cwd:             "/",
			NoNewPrivileges: true,
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  defaultCaps(),
				Effective: defaultCaps(),
				Permitted: defaultCaps(),
			},
			Rlimits: []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
		},
		Hostname: "husk",
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs",
				Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts",
				Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm",
				Options: noSuidExecDev("mode=1777", "size=65536k")},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: noSuidExecDev()},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: noSuidExecDev("ro")},
			{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: noSuidExecDev("relatime", "ro")},
		},
		Linux: &specs.Linux{
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace},
				{Type: specs.NetworkNamespace},
				{Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace},
				{Type: specs.MountNamespace},
			},
			MaskedPaths: []string{
				"/proc/acpi",
				"/proc/asound",
				"/proc/interrupts",
				"/proc/kcore",
				"/proc/keys",
				"/proc/latency_stats",
				"/proc/timer_list",
				"/proc/timer_stats",
				"/proc/sched_debug",
				"/proc/scsi",
				"/sys/firmware",
				"/sys/devices/virtual/powercap",
			},
			ReadonlyPaths: []string{
				"/proc/bus",
				"/proc/fs",
				"/proc/irq",
				"/proc/sys",
				"/proc/sysrq-trigger",
			},
		},
	}
}
