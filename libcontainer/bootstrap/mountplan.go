package bootstrap

/*
#include "mountplan.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"
)

// The mount plan's records and bounds (mountplan.h).
const (
	RecMountsRoot    = C.HUSK_MOUNTS_ROOT
	RecMountsMount   = C.HUSK_MOUNTS_MOUNT
	RecMountsPrepare = C.HUSK_MOUNTS_PREPARE
	RecMountsDevice  = C.HUSK_MOUNTS_DEVICE
	RecMountsHide    = C.HUSK_MOUNTS_HIDE
	MountsMaxPoints  = C.HUSK_MOUNTS_MAX_POINTS

	MountsMax      = C.HUSK_MOUNTS_MAX
	MountsMaxCount = C.HUSK_MOUNTS_MAX_COUNT
	MountsMaxStr   = C.HUSK_MOUNTS_MAX_STR
	MountsMaxOpt   = C.HUSK_MOUNTS_MAX_OPT
	MountsMaxProp  = C.HUSK_MOUNTS_MAX_PROP
	MountsMaxHead  = C.HUSK_MOUNTS_MAX_HEAD
)

// MountKind is what a mount step mounts.
type MountKind uint32

const (
	MountFS      MountKind = C.HUSK_MOUNT_FS      // a new filesystem
	MountBind    MountKind = C.HUSK_MOUNT_BIND    // a bind of a path
	MountBindFd  MountKind = C.HUSK_MOUNT_BIND_FD // a bind of an fd the parent opened
	MountSymlink MountKind = C.HUSK_MOUNT_SYMLINK // a symlink Data -> Source in Destination
	MountRemount MountKind = C.HUSK_MOUNT_REMOUNT // flags added to the mount at Destination
	MountMkdir   MountKind = C.HUSK_MOUNT_MKDIR   // Destination made when missing (process.cwd)
)

// MountDest is what a missing destination is made as.
type MountDest uint32

const (
	DestDir      MountDest = C.HUSK_DEST_DIR
	DestRealDir  MountDest = C.HUSK_DEST_REAL_DIR
	DestBySource MountDest = C.HUSK_DEST_BY_SOURCE
	DestCovered  MountDest = C.HUSK_DEST_COVERED
)

// Mount option bits (MountStep.Opts).
const (
	MountInRoot    = C.HUSK_MOUNT_IN_ROOT
	MountDetached  = C.HUSK_MOUNT_DETACHED
	MountTmpfsMode = C.HUSK_MOUNT_TMPFS_MODE
	MountCopyUp    = C.HUSK_MOUNT_COPYUP
	MountLabelled  = C.HUSK_MOUNT_LABELLED
	MountReplace   = C.HUSK_MOUNT_REPLACE
	MountAsk       = C.HUSK_MOUNT_ASK
	MountLegacy    = C.HUSK_MOUNT_LEGACY
)

const mountHeadSize = 64

var (
	_ [mountHeadSize - unsafe.Sizeof(C.struct_husk_mount_head{})]byte
	_ [unsafe.Sizeof(C.struct_husk_mount_head{}) - mountHeadSize]byte
	_ [24 - unsafe.Sizeof(C.struct_husk_mount_prepare{})]byte
	_ [unsafe.Sizeof(C.struct_husk_mount_prepare{}) - 24]byte
	_ [24 - unsafe.Sizeof(C.struct_husk_mount_device{})]byte
	_ [unsafe.Sizeof(C.struct_husk_mount_device{}) - 24]byte
)

// MountPlan is config.json's mounts[] as the launcher makes them
// (nsenter/mounts.c): Root is the rootfs's host path, symlinks resolved.
type MountPlan struct {
	Root    string
	Prepare *MountPrepare // nil: none (the tests' own)
	Mounts  []MountStep
}

// MountPrepare is what comes before the mounts (Go init's prepareRoot):
// "/" gets RootFlags (linux.rootfsPropagation), each of Points its
// flags (isolateRoot's), then the rootfs is bound onto itself.
type MountPrepare struct {
	RootFlags uint32
	Points    []MountPoint
	// After is the rootfs's propagation once it is "/" (enterRoot's): 0
	// for none.
	After uint32
	// NoPivot is --no-pivot: Hide's mounts taken away, then the rootfs
	// moved onto "/".
	NoPivot bool
	Hide    []HiddenMount
}

// HiddenMount is a whole proc or sysfs mount outside the rootfs.
type HiddenMount struct{ FSType, Path string }

// MountDevice is a node of linux.devices (devices[Index]) made at the
// step's Destination.
type MountDevice struct {
	Index, Mode, UID, GID uint32
	Rdev                  uint64
}

// MountPoint is a host mount point and the propagation it gets.
type MountPoint struct {
	Path  string
	Flags uint32
}

// MountStep is one mount, decided by the parent (or, with Device set,
// one of linux.devices' nodes).
type MountStep struct {
	Device         *MountDevice
	Index          uint32 // in mounts[]
	Kind           MountKind
	Dest           MountDest
	Opts           uint32
	Flags, Cleared uint32 // MS_* asked, MS_* asked off
	RecSet, RecClr uint64 // MOUNT_ATTR_* on the whole tree
	Propagation    []uint32
	Fd             int32 // MountBindFd's fd; else -1
	Destination    string
	// Source is a filesystem's source, or a bind's path (inside the root
	// with MountInRoot).
	Source string
	FSType string
	Data   string
	// Fallback is the host directory bound instead of a filesystem the
	// kernel refuses with EPERM (sysfs, mqueue from a user namespace).
	Fallback string
	// RootLabel is the SELinux label the filesystem's root gets
	// (linux.mountLabel on mqueue, which takes no context=).
	RootLabel string
	// Head is what the launcher's error for this step starts with:
	// `mounts[3]: error mounting "proc" to rootfs at "/proc"`.
	Head string
}

// Encode serialises p as the mount plan's payload, refusing what the
// launcher's parser would: the caller (launch.NewMountPlan) checks each
// field first, naming it.
func (p *MountPlan) Encode() ([]byte, error) {
	if len(p.Mounts) > MountsMaxCount {
		return nil, fmt.Errorf("%d mounts, over the %d the launcher takes", len(p.Mounts), MountsMaxCount)
	}
	var e planEncoder
	e.add(RecMountsRoot, cString(p.Root))
	if pr := p.Prepare; pr != nil {
		if len(pr.Points) > MountsMaxPoints {
			return nil, fmt.Errorf("%d mount points to isolate, over %d", len(pr.Points), MountsMaxPoints)
		}
		head := make([]uint32, 2+MountsMaxPoints+2)
		head[0], head[1], head[2+MountsMaxPoints] = pr.RootFlags, uint32(len(pr.Points)), pr.After
		if pr.NoPivot {
			head[3+MountsMaxPoints] = 1
		}
		var paths []string
		for i, pt := range pr.Points {
			if len(pt.Path) >= MountsMaxStr || strings.IndexByte(pt.Path, 0) >= 0 {
				return nil, fmt.Errorf("mount point %q: over %d bytes, or a NUL", pt.Path, MountsMaxStr-1)
			}
			head[2+i] = pt.Flags
			paths = append(paths, pt.Path)
		}
		e.add(RecMountsPrepare, append(u32s(head), nulList(paths)...))
		if pr.NoPivot {
			var hide []string
			for _, h := range pr.Hide {
				if len(h.Path) >= MountsMaxStr || strings.IndexByte(h.Path+h.FSType, 0) >= 0 || (h.FSType != "proc" && h.FSType != "sysfs") {
					return nil, fmt.Errorf("mount to hide %s %q: not proc or sysfs, over %d bytes, or a NUL", h.FSType, h.Path, MountsMaxStr-1)
				}
				hide = append(hide, h.FSType, h.Path)
			}
			e.add(RecMountsHide, nulList(hide))
		}
	}
	for i := range p.Mounts {
		s := &p.Mounts[i]
		if d := s.Device; d != nil {
			if len(s.Destination) >= MountsMaxStr || strings.IndexByte(s.Destination, 0) >= 0 {
				return nil, fmt.Errorf("devices[%d]: %q: over %d bytes, or a NUL", d.Index, s.Destination, MountsMaxStr-1)
			}
			b := u32s([]uint32{d.Index, d.Mode})
			b = u64s(b, d.Rdev)
			e.add(RecMountsDevice, append(append(b, u32s([]uint32{d.UID, d.GID})...), cString(s.Destination)...))
			continue
		}
		if len(s.Propagation) > MountsMaxProp {
			return nil, fmt.Errorf("mounts[%d]: %d propagation flags, over %d", s.Index, len(s.Propagation), MountsMaxProp)
		}
		b := u32s([]uint32{s.Index, uint32(s.Kind), uint32(s.Dest), s.Opts, s.Flags, s.Cleared})
		b = u64s(b, s.RecSet, s.RecClr)
		prop := make([]uint32, MountsMaxProp)
		copy(prop, s.Propagation)
		b = append(b, u32s(prop)...)
		b = binary.NativeEndian.AppendUint32(b, uint32(s.Fd))
		b = binary.NativeEndian.AppendUint32(b, 0)
		for k, str := range []string{s.Destination, s.Source, s.FSType, s.Data, s.Fallback, s.RootLabel, s.Head} {
			if max := map[bool]int{true: MountsMaxHead, false: MountsMaxStr}[k == 6]; len(str) >= max {
				return nil, fmt.Errorf("mounts[%d]: %q: %d bytes, over %d", s.Index, str, len(str), max-1)
			}
			if strings.IndexByte(str, 0) >= 0 {
				return nil, fmt.Errorf("mounts[%d]: %q: contains a NUL byte", s.Index, str)
			}
			b = append(b, cString(str)...)
		}
		e.add(RecMountsMount, b)
	}
	if len(e.b) > MountsMax {
		return nil, fmt.Errorf("the mount plan is %d bytes, over the %d the launcher takes", len(e.b), MountsMax)
	}
	return e.b, nil
}
