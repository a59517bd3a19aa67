// Package caps names the capabilities and turns a process's capability
// sets into the masks the launcher (nsenter/creds.c) applies: the
// bounding set before the uid changes, the effective, permitted,
// inheritable and ambient sets after it.
//
// Capabilities are named as in config.json ("CAP_CHOWN"). A name husk knows
// but the running kernel lacks (above /proc/sys/kernel/cap_last_cap) is not
// an error: MasksOf skips it and reports it so the caller can warn.
package caps

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// names is every capability husk knows, indexed by its number.
var names = [...]string{
	unix.CAP_CHOWN:              "CAP_CHOWN",
	unix.CAP_DAC_OVERRIDE:       "CAP_DAC_OVERRIDE",
	unix.CAP_DAC_READ_SEARCH:    "CAP_DAC_READ_SEARCH",
	unix.CAP_FOWNER:             "CAP_FOWNER",
	unix.CAP_FSETID:             "CAP_FSETID",
	unix.CAP_KILL:               "CAP_KILL",
	unix.CAP_SETGID:             "CAP_SETGID",
	unix.CAP_SETUID:             "CAP_SETUID",
	unix.CAP_SETPCAP:            "CAP_SETPCAP",
	unix.CAP_LINUX_IMMUTABLE:    "CAP_LINUX_IMMUTABLE",
	unix.CAP_NET_BIND_SERVICE:   "CAP_NET_BIND_SERVICE",
	unix.CAP_NET_BROADCAST:      "CAP_NET_BROADCAST",
	unix.CAP_NET_ADMIN:          "CAP_NET_ADMIN",
	unix.CAP_NET_RAW:            "CAP_NET_RAW",
	unix.CAP_IPC_LOCK:           "CAP_IPC_LOCK",
	unix.CAP_IPC_OWNER:          "CAP_IPC_OWNER",
	unix.CAP_SYS_MODULE:         "CAP_SYS_MODULE",
	unix.CAP_SYS_RAWIO:          "CAP_SYS_RAWIO",
	unix.CAP_SYS_CHROOT:         "CAP_SYS_CHROOT",
	unix.CAP_SYS_PTRACE:         "CAP_SYS_PTRACE",
	unix.CAP_SYS_PACCT:          "CAP_SYS_PACCT",
	unix.CAP_SYS_ADMIN:          "CAP_SYS_ADMIN",
	unix.CAP_SYS_BOOT:           "CAP_SYS_BOOT",
	unix.CAP_SYS_NICE:           "CAP_SYS_NICE",
	unix.CAP_SYS_RESOURCE:       "CAP_SYS_RESOURCE",
	unix.CAP_SYS_TIME:           "CAP_SYS_TIME",
	unix.CAP_SYS_TTY_CONFIG:     "CAP_SYS_TTY_CONFIG",
	unix.CAP_MKNOD:              "CAP_MKNOD",
	unix.CAP_LEASE:              "CAP_LEASE",
	unix.CAP_AUDIT_WRITE:        "CAP_AUDIT_WRITE",
	unix.CAP_AUDIT_CONTROL:      "CAP_AUDIT_CONTROL",
	unix.CAP_SETFCAP:            "CAP_SETFCAP",
	unix.CAP_MAC_OVERRIDE:       "CAP_MAC_OVERRIDE",
	unix.CAP_MAC_ADMIN:          "CAP_MAC_ADMIN",
	unix.CAP_SYSLOG:             "CAP_SYSLOG",
	unix.CAP_WAKE_ALARM:         "CAP_WAKE_ALARM",
	unix.CAP_BLOCK_SUSPEND:      "CAP_BLOCK_SUSPEND",
	unix.CAP_AUDIT_READ:         "CAP_AUDIT_READ",
	unix.CAP_PERFMON:            "CAP_PERFMON",
	unix.CAP_BPF:                "CAP_BPF",
	unix.CAP_CHECKPOINT_RESTORE: "CAP_CHECKPOINT_RESTORE",
}

// values maps a name back to its number.
var values = func() map[string]int {
	m := make(map[string]int, len(names))
	for v, name := range names {
		m[name] = v
	}
	return m
}()

// Value returns the number of the capability called name ("CAP_KILL").
func Value(name string) (int, bool) {
	v, ok := values[name]
	return v, ok
}

// Names lists every capability husk knows, in number order.
func Names() []string {
	return append([]string(nil), names[:]...)
}

// name is the name of capability v, or "cap(v)" for one husk does not know.
func name(v int) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return "cap(" + strconv.Itoa(v) + ")"
}
