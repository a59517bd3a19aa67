package rootless

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// CgroupPlan is what a rootless container does about cgroups.
type CgroupPlan int

const (
	// UseCgroups: make and join them as usual.
	UseCgroups CgroupPlan = iota
	// SkipCgroups: run without cgroups of its own (it stays in the
	// caller's), as runc does where the user may not write any.
	SkipCgroups
)

// PlanCgroups decides for a rootless container whose cgroups would go to
// dirs (one per hierarchy, absolute host paths). writable tells whether
// the caller may make a cgroup in a dir (its nearest existing ancestor).
// limitField is the first limit set in linux.resources (FirstLimit),
// explicitPath linux.cgroupsPath. Skipping returns a note for the user; a
// limit, or an asked cgroupsPath, with nowhere to write is an error
// naming the field.
func PlanCgroups(dirs []string, writable func(string) bool, limitField, explicitPath string) (CgroupPlan, string, error) {
	var denied []string
	for _, d := range dirs {
		if !writable(d) {
			denied = append(denied, d)
		}
	}
	if len(denied) == 0 {
		return UseCgroups, "", nil
	}
	why := fmt.Sprintf("%s not writable by uid %d", denied[0], os.Geteuid())
	if len(denied) > 1 {
		why = fmt.Sprintf("%s and %d more not writable by uid %d", denied[0], len(denied)-1, os.Geteuid())
	}
	if limitField != "" {
		return 0, "", fmt.Errorf("%s: a rootless container cannot have cgroup limits without a writable cgroup (%s)", limitField, why)
	}
	if explicitPath != "" {
		return 0, "", fmt.Errorf("linux.cgroupsPath: %q: a rootless container cannot use it (%s)", explicitPath, why)
	}
	return SkipCgroups, "rootless: the container gets no cgroups of its own (" + why + ")", nil
}

// FirstLimit names the first limit set in r ("linux.resources.memory.limit"),
// or "" when there is none. Device rules are not limits: a rootless
// container has no device cgroup and can only reach bound host nodes.
func FirstLimit(r *specs.LinuxResources) string {
	if r == nil {
		return ""
	}
	v := reflect.ValueOf(*r)
	t := v.Type()
	for i := range t.NumField() {
		name := jsonName(t.Field(i))
		if name == "devices" {
			continue
		}
		if f := firstSet(v.Field(i), "linux.resources."+name); f != "" {
			return f
		}
	}
	return ""
}

// firstSet is the path of the first non-zero leaf of v (named field).
func firstSet(v reflect.Value, field string) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return firstSet(v.Elem(), field)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := firstSet(v.Field(i), field+"."+jsonName(v.Type().Field(i))); f != "" {
				return f
			}
		}
		return ""
	case reflect.Slice, reflect.Map:
		if v.Len() > 0 {
			return field
		}
		return ""
	}
	if v.IsZero() {
		return ""
	}
	return field
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// Writable reports whether the caller may make a cgroup at dir: its
// nearest existing ancestor is a directory it can write and search.
func Writable(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if err := unix.Stat(d, &st); err == nil {
			return st.Mode&unix.S_IFMT == unix.S_IFDIR && unix.Access(d, unix.W_OK|unix.X_OK) == nil
		}
		if d == "/" {
			return false
		}
	}
}

// OwnCgroupV2 is the caller's cgroup v2 path from /proc/self/cgroup's
// text (the "0::" line).
func OwnCgroupV2(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no cgroup v2 line")
}

// Delegation is the top of the subtree of the v2 hierarchy at mount
// that was delegated to the caller, found from its own cgroup own: the
// highest ancestor whose directory and cgroup.procs the caller may write
// (systemd's user@UID.service). "" when there is none.
func Delegation(mount, own string, writable func(string) bool) string {
	top := ""
	for p := path.Clean(own); p != "/" && p != "."; p = path.Dir(p) {
		dir := filepath.Join(mount, p)
		if !writable(dir) || !writable(filepath.Join(dir, "cgroup.procs")) {
			break
		}
		top = p
	}
	return top
}

// SystemdUserBus is the address of the D-Bus session bus on which a user
// without root reaches its own systemd (user@UID.service), the one
// --systemd-cgroup then asks for the container's scope, as runc does:
// $DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus. Without either
// the error says why the flag cannot work for the caller.
func SystemdUserBus(getenv func(string) string, stat func(string) error) (string, error) {
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		return a, nil
	}
	xdg := getenv("XDG_RUNTIME_DIR")
	if xdg != "" {
		bus := filepath.Join(xdg, "bus")
		if err := stat(bus); err == nil {
			return "unix:path=" + bus, nil
		}
		return "", fmt.Errorf("--systemd-cgroup: a user without root (uid %d) needs its own systemd over a D-Bus session bus, "+
			"and there is none: $DBUS_SESSION_BUS_ADDRESS is unset and %s does not exist "+
			"(install dbus-user-session and log in, or start user@%d.service with it); or drop the flag to use a delegated cgroup subtree",
			os.Geteuid(), bus, os.Geteuid())
	}
	return "", fmt.Errorf("--systemd-cgroup: a user without root (uid %d) needs its own systemd over a D-Bus session bus, "+
		"and there is none: neither $DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR is set; or drop the flag to use a delegated cgroup subtree",
		os.Geteuid())
}
