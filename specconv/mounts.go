package specconv

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// mountFlag is what a mount option does to the MS_* flags: set flag, or
// clear it.
type mountFlag struct {
	clear bool
	flag  int
}

// mountFlags are the options that become MS_* flags.
var mountFlags = map[string]mountFlag{
	"defaults":      {false, 0},
	"ro":            {false, unix.MS_RDONLY},
	"rw":            {true, unix.MS_RDONLY},
	"nosuid":        {false, unix.MS_NOSUID},
	"suid":          {true, unix.MS_NOSUID},
	"nodev":         {false, unix.MS_NODEV},
	"dev":           {true, unix.MS_NODEV},
	"noexec":        {false, unix.MS_NOEXEC},
	"exec":          {true, unix.MS_NOEXEC},
	"sync":          {false, unix.MS_SYNCHRONOUS},
	"async":         {true, unix.MS_SYNCHRONOUS},
	"dirsync":       {false, unix.MS_DIRSYNC},
	"remount":       {false, unix.MS_REMOUNT},
	"mand":          {false, unix.MS_MANDLOCK},
	"nomand":        {true, unix.MS_MANDLOCK},
	"noatime":       {false, unix.MS_NOATIME},
	"atime":         {true, unix.MS_NOATIME},
	"nodiratime":    {false, unix.MS_NODIRATIME},
	"diratime":      {true, unix.MS_NODIRATIME},
	"relatime":      {false, unix.MS_RELATIME},
	"norelatime":    {true, unix.MS_RELATIME},
	"strictatime":   {false, unix.MS_STRICTATIME},
	"nostrictatime": {true, unix.MS_STRICTATIME},
	"nosymfollow":   {false, unix.MS_NOSYMFOLLOW},
	"symfollow":     {true, unix.MS_NOSYMFOLLOW},
	"bind":          {false, unix.MS_BIND},
	"rbind":         {false, unix.MS_BIND | unix.MS_REC},
}

// mountPropagation are the options that change a mount's propagation.
var mountPropagation = map[string]int{
	"shared":      unix.MS_SHARED,
	"rshared":     unix.MS_SHARED | unix.MS_REC,
	"slave":       unix.MS_SLAVE,
	"rslave":      unix.MS_SLAVE | unix.MS_REC,
	"private":     unix.MS_PRIVATE,
	"rprivate":    unix.MS_PRIVATE | unix.MS_REC,
	"unbindable":  unix.MS_UNBINDABLE,
	"runbindable": unix.MS_UNBINDABLE | unix.MS_REC,
}

// unsupportedOption reports whether o is one of runc's own options husk
// does not implement yet. Passed on as data they would fail the mount or,
// on a bind mount, be silently dropped (an "rro" mount left writable).
func unsupportedOption(o string) bool {
	switch o {
	case "idmap", "ridmap", "tmpcopyup":
		return true
	}
	// The recursive mount_setattr forms: rro, rnosuid, ratime...
	if rest, ok := strings.CutPrefix(o, "r"); ok {
		if f, ok := mountFlags[rest]; ok && f.flag&(unix.MS_BIND|unix.MS_REMOUNT) == 0 && rest != "defaults" {
			return true
		}
	}
	return false
}

// mounts converts the mounts list.
func (c *converter) mounts() error {
	for i, m := range c.spec.Mounts {
		mnt, err := c.mount(index("mounts", i), m)
		if err != nil {
			return err
		}
		c.cfg.Mounts = append(c.cfg.Mounts, mnt)
	}
	return nil
}

// mount converts one mount; field is its path ("mounts[3]").
func (c *converter) mount(field string, m specs.Mount) (*configs.Mount, error) {
	if !filepath.IsAbs(m.Destination) {
		return nil, fieldErrorf(field+".destination", "must be absolute, got %q", m.Destination)
	}
	if len(m.UIDMappings) > 0 || len(m.GIDMappings) > 0 {
		return nil, notSupported(field+".uidMappings", "idmapped mounts are not implemented")
	}
	mnt := &configs.Mount{
		Source:      m.Source,
		Destination: filepath.Clean(m.Destination),
		Device:      m.Type,
	}
	var data []string
	for j, o := range m.Options {
		if f, ok := mountFlags[o]; ok {
			if f.clear {
				mnt.Flags &^= f.flag
				mnt.ClearedFlags |= f.flag
			} else {
				mnt.Flags |= f.flag
				mnt.ClearedFlags &^= f.flag
			}
			continue
		}
		if p, ok := mountPropagation[o]; ok {
			mnt.PropagationFlags = append(mnt.PropagationFlags, p)
			continue
		}
		if unsupportedOption(o) {
			return nil, notSupported(index(field+".options", j), fmt.Sprintf("remove %q", o))
		}
		data = append(data, o)
	}
	mnt.Data = strings.Join(data, ",")
	if m.Type == "bind" {
		mnt.Flags |= unix.MS_BIND
	}
	if mnt.IsBind() {
		return mnt, c.bindMount(field, mnt)
	}
	return mnt, nil
}

// bindMount finishes a bind mount: its type is "bind", whatever config.json
// said, and a relative source is in the bundle.
func (c *converter) bindMount(field string, mnt *configs.Mount) error {
	mnt.Device = "bind"
	if mnt.Source == "" {
		return fieldErrorf(field+".source", "must not be empty for a bind mount")
	}
	source, err := c.inBundle(field+".source", mnt.Source)
	if err != nil {
		return err
	}
	mnt.Source = source
	if mnt.Data != "" {
		c.warn(field+".options", fmt.Sprintf("%q ignored: the kernel takes no data for a bind mount", mnt.Data))
	}
	return nil
}
