package configs

import "testing"

func TestCheckProcMount(t *testing.T) {
	for _, c := range []struct {
		dest, fstype string
		bind, ok     bool
	}{
		{"/proc", "proc", false, true},
		{"/proc", "bind", true, true},
		{"/proc", "tmpfs", false, false},
		{"/proc/1", "bind", true, false},
		{"/proc/self/fd", "tmpfs", false, false},
		{"/proc/sys", "tmpfs", false, false},
		{"/proc/../proc/1", "bind", true, false},
		{"proc/1", "bind", true, false},
		{"/proc/cpuinfo", "bind", true, true},
		{"/proc/sys/kernel/ns_last_pid", "bind", true, true},
		{"/proc/cpuinfo/x", "bind", true, false},
		{"/procfoo", "tmpfs", false, true},
		{"/mnt/proc/1", "tmpfs", false, true},
		{"/", "bind", true, true},
	} {
		err := CheckProcMount(c.dest, c.fstype, c.bind)
		if (err == nil) != c.ok {
			t.Errorf("CheckProcMount(%q, %q, %v) = %v, want ok %v", c.dest, c.fstype, c.bind, err, c.ok)
		}
	}
}
