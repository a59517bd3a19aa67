package configs

import "golang.org/x/sys/unix"

// nsInfo ties a namespace type to its clone flag and its /proc/PID/ns name.
var nsInfo = map[NamespaceType]struct {
	flag     uintptr
	procName string
}{
	NEWUSER:   {unix.CLONE_NEWUSER, "user"},
	NEWNS:     {unix.CLONE_NEWNS, "mnt"},
	NEWUTS:    {unix.CLONE_NEWUTS, "uts"},
	NEWIPC:    {unix.CLONE_NEWIPC, "ipc"},
	NEWPID:    {unix.CLONE_NEWPID, "pid"},
	NEWNET:    {unix.CLONE_NEWNET, "net"},
	NEWCGROUP: {unix.CLONE_NEWCGROUP, "cgroup"},
	NEWTIME:   {unix.CLONE_NEWTIME, "time"},
}

// Known reports whether t is a namespace type husk knows.
func (t NamespaceType) Known() bool { _, ok := nsInfo[t]; return ok }

// CloneFlag is t's CLONE_NEW* flag.
func (t NamespaceType) CloneFlag() uintptr { return nsInfo[t].flag }

// ProcName is t's file name under /proc/PID/ns ("mnt", "net", ...).
func (t NamespaceType) ProcName() string { return nsInfo[t].procName }

// NamespaceTypes lists every type in the order namespaces are joined:
// user first, so the others are joined with its privileges.
func NamespaceTypes() []NamespaceType {
	return []NamespaceType{NEWUSER, NEWIPC, NEWUTS, NEWNET, NEWPID, NEWNS, NEWCGROUP, NEWTIME}
}
