package specconv

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
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
		}
		seen[t] = true
		c.cfg.Namespaces = append(c.cfg.Namespaces, configs.Namespace{Type: t, Path: ns.Path})
	}
	if !seen[configs.NEWNS] {
		if err := c.hostMountNamespace(); err != nil {
			return err
		}
	}
	return c.rootfsPropagation()
}

// rootfsPropagation sets the propagation of the container's root; none
// (0) leaves init's default.
func (c *converter) rootfsPropagation() error {
	p := c.spec.Linux.RootfsPropagation
	if p == "" {
		return nil
	}
	flags, ok := mountPropagation[p]
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
		case name == "kernel.hostname":
			// Namespaced, but the spec has a field for it; two ways to
			// set the host name would disagree (runc refuses it too).
			return fieldErrorf("linux.sysctl", "%q conflicts with the \"hostname\" field: set the host name there", key)
		case name == "kernel.domainname":
			need = configs.NEWUTS
		case strings.HasPrefix(name, "user."):
			// The limits of /proc/sys/user are per user namespace
			// (user.max_*_namespaces, …), as runc allows them.
			need = configs.NEWUSER
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

// hostMountNamespace checks a container that shares the host's mount
// namespace, as runc allows: nothing can be mounted, masked or made
// read-only for it alone (init only chroots into root.path). Like runc,
// husk refuses the masks and read-only paths it could not apply, and
// ignores the mounts and root.readonly (runc would make them on the
// host's tree).
func (c *converter) hostMountNamespace() error {
	l := c.spec.Linux
	if len(l.MaskedPaths) > 0 {
		return fieldErrorf("linux.maskedPaths", "cannot mask %q without a new mount namespace", l.MaskedPaths[0])
	}
	if len(l.ReadonlyPaths) > 0 {
		return fieldErrorf("linux.readonlyPaths", "cannot make %q read-only without a new mount namespace", l.ReadonlyPaths[0])
	}
	if len(c.spec.Mounts) > 0 {
		c.warn("mounts", "ignored: the container shares the host's mount namespace")
	}
	if c.spec.Root != nil && c.spec.Root.Readonly {
		c.warn("root.readonly", "ignored: the container shares the host's mount namespace")
	}
	return nil
}
