package specconv

import (
	"fmt"
	"math"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// maxIDMapLines is the kernel's limit on the lines of one uid_map or
// gid_map, which an idmapped mount's user namespace is given.
const maxIDMapLines = 340

// idmapOption is where an "idmap" or "ridmap" option was seen.
type idmapOption struct {
	field     string // mounts[N].options[M]
	name      string // "idmap" or "ridmap"
	recursive bool
}

// mountIDMap sets mnt.IDMap from the mount's mappings and its idmap or
// ridmap option (opt, nil when neither was given). A mapping may be
// explicit (uidMappings and gidMappings) or, with only the option,
// implied: the container's user namespace's, new or joined.
func (c *converter) mountIDMap(field string, m specs.Mount, mnt *configs.Mount, opt *idmapOption) error {
	explicit := len(m.UIDMappings) > 0 || len(m.GIDMappings) > 0
	if !explicit && opt == nil {
		return nil
	}
	where := field + ".uidMappings"
	if opt != nil {
		where = opt.field
	}
	if !mnt.IsBind() {
		return fieldErrorf(where, "an idmapped mount must be a bind mount: the kernel cannot idmap a new %q mount from here", m.Type)
	}
	// As runc: only "ridmap" maps the submounts of an rbind; mappings
	// alone, or with "idmap", map its top mount, and the submounts keep
	// their own ids.
	idmap := &configs.MountIDMap{Recursive: opt != nil && opt.recursive}
	if explicit {
		if len(m.UIDMappings) == 0 || len(m.GIDMappings) == 0 {
			return fieldErrorf(field+".uidMappings", "uidMappings and gidMappings go together: both or neither")
		}
		var err error
		if idmap.UIDMappings, err = mountMappings(field+".uidMappings", m.UIDMappings); err != nil {
			return err
		}
		if idmap.GIDMappings, err = mountMappings(field+".gidMappings", m.GIDMappings); err != nil {
			return err
		}
	} else if _, ok := c.cfg.Namespace(configs.NEWUSER); !ok {
		return fieldErrorf(where, "an idmapped mount without uidMappings and gidMappings takes the container's user namespace's, and there is none")
	}
	mnt.IDMap = idmap
	return nil
}

// mountMappings checks one mapping list: sizes, ranges within the 32-bit
// id space, no two entries overlapping on either side, the kernel's
// line limit.
func mountMappings(field string, list []specs.LinuxIDMapping) ([]configs.IDMap, error) {
	if len(list) > maxIDMapLines {
		return nil, fieldErrorf(field, "%d entries, the kernel takes at most %d", len(list), maxIDMapLines)
	}
	out := make([]configs.IDMap, 0, len(list))
	for i, id := range list {
		f := index(field, i)
		switch {
		case id.Size == 0:
			return nil, fieldErrorf(f+".size", "must not be 0")
		case uint64(id.ContainerID)+uint64(id.Size) > math.MaxUint32:
			return nil, fieldErrorf(f, "containerID %d + size %d exceeds the id limit %d", id.ContainerID, id.Size, uint32(math.MaxUint32))
		case uint64(id.HostID)+uint64(id.Size) > math.MaxUint32:
			return nil, fieldErrorf(f, "hostID %d + size %d exceeds the id limit %d", id.HostID, id.Size, uint32(math.MaxUint32))
		}
		for j, prev := range list[:i] {
			if overlap(prev.ContainerID, prev.Size, id.ContainerID, id.Size) {
				return nil, fieldErrorf(f, "containerID range %s overlaps entry %d's %s", span(id.ContainerID, id.Size), j, span(prev.ContainerID, prev.Size))
			}
			if overlap(prev.HostID, prev.Size, id.HostID, id.Size) {
				return nil, fieldErrorf(f, "hostID range %s overlaps entry %d's %s", span(id.HostID, id.Size), j, span(prev.HostID, prev.Size))
			}
		}
		out = append(out, configs.IDMap{ContainerID: id.ContainerID, HostID: id.HostID, Size: id.Size})
	}
	return out, nil
}

func overlap(a, asize, b, bsize uint32) bool {
	return uint64(a) < uint64(b)+uint64(bsize) && uint64(b) < uint64(a)+uint64(asize)
}

func span(start, size uint32) string {
	return fmt.Sprintf("%d-%d", start, uint64(start)+uint64(size)-1)
}
