package specconv

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// namespaces sets the namespaces to make or join, and rootfsPropagation.
func (c *converter) namespaces() error {
	l := c.spec.Linux
	if l == nil {
		return fieldErrorf("linux", "missing")
	}
	seen := map[configs.NamespaceType]bool{}
	for i, ns := range l.Namespaces {
		field := index("linux.namespaces", i)
		t := configs.NamespaceType(ns.Type)
		switch {
		case !t.Known():
			return fieldErrorf(field+".type", "unknown %q", ns.Type)
		case seen[t]:
			return fieldErrorf(field, "duplicate %q namespace", ns.Type)
		case ns.Path != "" && !filepath.IsAbs(ns.Path):
			return fieldErrorf(field+".path", "must be absolute, got %q", ns.Path)
		case t == configs.NEWNS && ns.Path != "":
			// husk builds the rootfs in the mount namespace: never in one
			// that something else lives in.
			return notSupported(field+".path", "joining a mount namespace ("+ns.Path+") is refused; remove the path")
		}
		seen[t] = true
		c.cfg.Namespaces = append(c.cfg.Namespaces, configs.Namespace{Type: t, Path: ns.Path})
	}
	if !seen[configs.NEWNS] {
		return fieldErrorf("linux.namespaces", `needs a new "mount" namespace, husk mounts the rootfs in it`)
	}
	return c.rootfsPropagation()
}

// rootPropagation maps rootfsPropagation to its MS_* flags.
var rootPropagation = map[string]int{
	"shared":      unix.MS_SHARED,
	"rshared":     unix.MS_SHARED | unix.MS_REC,
	"slave":       unix.MS_SLAVE,
	"rslave":      unix.MS_SLAVE | unix.MS_REC,
	"private":     unix.MS_PRIVATE,
	"rprivate":    unix.MS_PRIVATE | unix.MS_REC,
	"unbindable":  unix.MS_UNBINDABLE,
	"runbindable": unix.MS_UNBINDABLE | unix.MS_REC,
}

// rootfsPropagation sets the propagation of the container's root; none
// (0) leaves init's default.
func (c *converter) rootfsPropagation() error {
	p := c.spec.Linux.RootfsPropagation
	if p == "" {
		return nil
	}
	flags, ok := rootPropagation[p]
	if !ok {
		return fieldErrorf("linux.rootfsPropagation", "unknown %q", p)
	}
	c.cfg.RootPropagation = flags
	return nil
}

// idMappings sets the uid and gid maps of a user namespace.
func (c *converter) idMappings() error {
	l := c.linux()
	_, userns := c.cfg.Namespace(configs.NEWUSER)
	for _, m := range []struct {
		field string
		list  []specs.LinuxIDMapping
		dst   *[]configs.IDMap
	}{
		{"linux.uidMappings", l.UIDMappings, &c.cfg.UIDMappings},
		{"linux.gidMappings", l.GIDMappings, &c.cfg.GIDMappings},
	} {
		if len(m.list) == 0 {
			if c.cfg.NewNamespace(configs.NEWUSER) {
				return fieldErrorf(m.field, "missing, a new user namespace needs uid and gid mappings")
			}
			continue
		}
		if !userns {
			return fieldErrorf(m.field, `needs a "user" namespace in linux.namespaces`)
		}
		for i, id := range m.list {
			field := index(m.field, i)
			switch {
			case id.Size == 0:
				return fieldErrorf(field+".size", "must not be 0")
			case uint64(id.ContainerID)+uint64(id.Size) > math.MaxUint32+1:
				return fieldErrorf(field, "containerID %d + size %d is beyond the last id", id.ContainerID, id.Size)
			case uint64(id.HostID)+uint64(id.Size) > math.MaxUint32+1:
				return fieldErrorf(field, "hostID %d + size %d is beyond the last id", id.HostID, id.Size)
			}
			*m.dst = append(*m.dst, configs.IDMap{ContainerID: id.ContainerID, HostID: id.HostID, Size: id.Size})
		}
	}
	return nil
}

// uts checks that hostname and domainname have a uts namespace to go to.
// Like runc, a joined one will do: its owner asked for the name.
func (c *converter) uts() error {
	if _, ok := c.cfg.Namespace(configs.NEWUTS); ok {
		return nil
	}
	if c.cfg.Hostname != "" {
		return fieldErrorf("hostname", "needs a new uts namespace to set %q", c.cfg.Hostname)
	}
	if c.cfg.Domainname != "" {
		return fieldErrorf("domainname", "needs a new uts namespace to set %q", c.cfg.Domainname)
	}
	return nil
}

// ipcSysctls are the sysctls of the ipc namespace outside fs.mqueue.
var ipcSysctls = map[string]bool{
	"kernel.msgmax": true, "kernel.msgmnb": true, "kernel.msgmni": true, "kernel.sem": true,
	"kernel.shmall": true, "kernel.shmmax": true, "kernel.shmmni": true, "kernel.shm_rmid_forced": true,
}

// sysctl checks that each sysctl belongs to a namespace of the container:
// any other would change the host.
func (c *converter) sysctl() error {
	sysctls := c.linux().Sysctl
	for _, key := range slices.Sorted(maps.Keys(sysctls)) {
		var need configs.NamespaceType
		name := strings.ReplaceAll(key, "/", ".")
		switch {
		case ipcSysctls[name] || strings.HasPrefix(name, "fs.mqueue."):
			need = configs.NEWIPC
		case strings.HasPrefix(name, "net."):
			need = configs.NEWNET
		case name == "kernel.hostname" || name == "kernel.domainname":
			need = configs.NEWUTS
		default:
			return fieldErrorf("linux.sysctl", "%q is not namespaced, setting it would change the host", key)
		}
		if _, ok := c.cfg.Namespace(need); !ok {
			return fieldErrorf("linux.sysctl", "%q needs a %q namespace", key, need)
		}
		if c.cfg.Sysctl == nil {
			c.cfg.Sysctl = map[string]string{}
		}
		c.cfg.Sysctl[key] = sysctls[key]
	}
	return nil
}
