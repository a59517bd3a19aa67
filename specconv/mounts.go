package specconv

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
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
	"iversion":      {false, unix.MS_I_VERSION},
	"noiversion":    {true, unix.MS_I_VERSION},
	"lazytime":      {false, unix.MS_LAZYTIME},
	"nolazytime":    {true, unix.MS_LAZYTIME},
	"silent":        {false, unix.MS_SILENT},
	"loud":          {true, unix.MS_SILENT},
	"bind":          {false, unix.MS_BIND},
	"rbind":         {false, unix.MS_BIND | unix.MS_REC},
}

// mountPropagation are the options that change a mount's propagation, and
// the values of linux.rootfsPropagation.
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

// recAttr is what a recursive option does with mount_setattr(2) on the
// mount and every mount under it: set these MOUNT_ATTR_* bits, clear those.
type recAttr struct {
	set, clr uint64
}

// atime sets one atime mode: the kernel wants the whole atime field
// cleared whenever one is set.
func atime(mode uint64) recAttr { return recAttr{mode, unix.MOUNT_ATTR__ATIME} }

// mountRecursive are the options applied with mount_setattr(AT_RECURSIVE),
// as runc does: "rro" makes the submounts of a bind read-only too.
var mountRecursive = map[string]recAttr{
	"rro":            {unix.MOUNT_ATTR_RDONLY, 0},
	"rrw":            {0, unix.MOUNT_ATTR_RDONLY},
	"rnosuid":        {unix.MOUNT_ATTR_NOSUID, 0},
	"rsuid":          {0, unix.MOUNT_ATTR_NOSUID},
	"rnodev":         {unix.MOUNT_ATTR_NODEV, 0},
	"rdev":           {0, unix.MOUNT_ATTR_NODEV},
	"rnoexec":        {unix.MOUNT_ATTR_NOEXEC, 0},
	"rexec":          {0, unix.MOUNT_ATTR_NOEXEC},
	"rnodiratime":    {unix.MOUNT_ATTR_NODIRATIME, 0},
	"rdiratime":      {0, unix.MOUNT_ATTR_NODIRATIME},
	"rnosymfollow":   {unix.MOUNT_ATTR_NOSYMFOLLOW, 0},
	"rsymfollow":     {0, unix.MOUNT_ATTR_NOSYMFOLLOW},
	"rnoatime":       atime(unix.MOUNT_ATTR_NOATIME),
	"rstrictatime":   atime(unix.MOUNT_ATTR_STRICTATIME),
	"rrelatime":      atime(unix.MOUNT_ATTR_RELATIME),
	"ratime":         atime(unix.MOUNT_ATTR_RELATIME), // "no noatime": the kernel's default, relatime
	"rnorelatime":    atime(unix.MOUNT_ATTR_STRICTATIME),
	"rnostrictatime": atime(unix.MOUNT_ATTR_RELATIME),
}

// MountOptions lists every option the mount parser gives a meaning to,
// sorted: the mountOptions of `husk features`, made from the same tables.
func MountOptions() []string {
	out := slices.Collect(maps.Keys(mountFlags))
	out = slices.AppendSeq(out, maps.Keys(mountPropagation))
	out = slices.AppendSeq(out, maps.Keys(mountRecursive))
	out = append(out, "tmpcopyup")
	slices.Sort(out)
	return out
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
	if m.Destination == "" {
		return nil, fieldErrorf(field+".destination", "must not be empty")
	}
	if !filepath.IsAbs(m.Destination) {
		// runc takes it relative to "/", with a warning.
		c.warn(field+".destination", fmt.Sprintf("%q is relative, taken as %q", m.Destination, "/"+m.Destination))
	}
	mnt := &configs.Mount{
		Source:      m.Source,
		Destination: inRootfs(c.cfg.Rootfs, m.Destination),
		Device:      m.Type,
	}
	var data []string
	var idmap *idmapOption
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
		if r, ok := mountRecursive[o]; ok {
			mnt.RecAttrSet = mnt.RecAttrSet&^r.clr | r.set
			mnt.RecAttrClr = mnt.RecAttrClr&^r.set | r.clr
			continue
		}
		if o == "tmpcopyup" {
			if m.Type != "tmpfs" {
				c.warn(index(field+".options", j), fmt.Sprintf("tmpcopyup ignored: it applies to a tmpfs, not %q", m.Type))
			}
			mnt.CopyUp = m.Type == "tmpfs"
			continue
		}
		if o == "idmap" || o == "ridmap" {
			opt := &idmapOption{field: index(field+".options", j), name: o, recursive: o == "ridmap"}
			if idmap != nil && idmap.name != o {
				return nil, fieldErrorf(opt.field, "%q with %q (%s): choose one", o, idmap.name, idmap.field)
			}
			idmap = opt
			continue
		}
		data = append(data, o)
	}
	mnt.Data = strings.Join(data, ",")
	if m.Type == "bind" {
		mnt.Flags |= unix.MS_BIND
	}
	if err := configs.CheckProcMount(mnt.Destination, m.Type, mnt.IsBind()); err != nil {
		return nil, fieldErrorf(field+".destination", "%w", err)
	}
	if err := c.mountIDMap(field, m, mnt, idmap); err != nil {
		return nil, err
	}
	if mnt.IsBind() {
		return mnt, c.bindMount(field, mnt)
	}
	return mnt, nil
}

// inRootfs is the container path of a mount destination: dest cleaned and
// made absolute, and, when it names a place under the rootfs by its host
// path (root.path), that place, as runc takes it ("$ROOTFS/mnt/x" is
// "/mnt/x").
func inRootfs(rootfs, dest string) string {
	p := filepath.Clean("/" + dest)
	if in, ok := configs.UnderRoot(rootfs, p); ok {
		return in
	}
	return p
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
