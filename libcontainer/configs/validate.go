package configs

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Validate checks what only the host can tell: that the rootfs is a
// directory and each namespace path is a namespace of the right type.
// specconv has already checked everything that needs no system call.
func Validate(c *Config) error {
	if c.Process == nil || len(c.Process.Args) == 0 {
		return fmt.Errorf("process.args: must not be empty")
	}
	fi, err := os.Stat(c.Rootfs)
	if err != nil {
		return fmt.Errorf("root.path: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("root.path: %q is not a directory", c.Rootfs)
	}
	for i, ns := range c.Namespaces {
		if ns.Path == "" {
			continue
		}
		if err := checkNsPath(ns); err != nil {
			return fmt.Errorf("linux.namespaces[%d].path: %w", i, err)
		}
	}
	if c.NewNamespace(NEWUSER) && (len(c.UIDMappings) == 0 || len(c.GIDMappings) == 0) {
		return fmt.Errorf("linux.uidMappings, linux.gidMappings: a new user namespace needs both")
	}
	return checkSecurity(c)
}

// checkNsPath opens a namespace path and asks the kernel its type.
func checkNsPath(ns Namespace) error {
	fd, err := unix.Open(ns.Path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s namespace %q: %w", ns.Type, ns.Path, err)
	}
	defer unix.Close(fd)
	got, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE)
	if err != nil {
		return fmt.Errorf("%s namespace %q: not a namespace file: %w", ns.Type, ns.Path, err)
	}
	if uintptr(got) != ns.Type.CloneFlag() {
		return fmt.Errorf("%s namespace %q: is a %s namespace", ns.Type, ns.Path, typeOfFlag(uintptr(got)))
	}
	return nil
}

func typeOfFlag(flag uintptr) NamespaceType {
	for t, info := range nsInfo {
		if info.flag == flag {
			return t
		}
	}
	return NamespaceType(fmt.Sprintf("%#x", flag))
}
