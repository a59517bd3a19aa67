package bootstrap

/*
#include "bootstrap.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// RootfsFlags say what pid 1 does besides the mount plan (bootstrap.h:
// HUSK_ROOTFS_*).
type RootfsFlags uint32

const (
	// RootfsAskHooks makes pid 1 stop at CREATE_HOOKS once the rootfs is
	// mounted: the parent applies the cgroup limits then, and runs
	// prestart and createRuntime. Without it the parent applied the
	// limits before it sent CONFIG.
	RootfsAskHooks RootfsFlags = C.HUSK_BUILD_ASK_HOOKS
	// RootfsLoUp: a new network namespace, whose lo pid 1 sets up first.
	RootfsLoUp RootfsFlags = C.HUSK_BUILD_LO_UP
	// RootfsDevNull: pid 1 clones the host's /dev/null before
	// pivot_root, to mask files with (linux.maskedPaths).
	RootfsDevNull RootfsFlags = C.HUSK_BUILD_DEV_NULL
	// RootfsChroot: no mount namespace; pid 1 chroots into Chroot.
	RootfsChroot RootfsFlags = C.HUSK_BUILD_CHROOT

	rootfsFlags = C.HUSK_BUILD_FLAGS
	// RootfsMax bounds each part of CONFIG's payload.
	RootfsMax = C.HUSK_BUILD_MAX
)

// Rootfs is CONFIG's payload: how pid 1 (nsenter/build.c) builds the
// container's rootfs.
type Rootfs struct {
	Flags  RootfsFlags
	Mounts []byte // an encoded MountPlan, or nil
	Hooks  []byte // an encoded HookPlan (createContainer), or nil
	Chroot string // with RootfsChroot: the rootfs's path
}

// Encode is r as CONFIG's payload: struct husk_build_head, then the
// parts. Every part is bounded, as nsenter/build.c checks again.
func (r *Rootfs) Encode() ([]byte, error) {
	if r.Flags&^rootfsFlags != 0 {
		return nil, fmt.Errorf("rootfs flags %#x: unknown bits", uint32(r.Flags))
	}
	if (r.Flags&RootfsChroot != 0) != (r.Chroot != "") {
		return nil, fmt.Errorf("root.path %q: a chroot path goes with the chroot flag only", r.Chroot)
	}
	if strings.IndexByte(r.Chroot, 0) >= 0 {
		return nil, fmt.Errorf("root.path %q: contains a NUL byte", r.Chroot)
	}
	chroot := 0
	if r.Chroot != "" {
		chroot = len(r.Chroot) + 1
	}
	for _, p := range []struct {
		what string
		n    int
	}{{"the mount plan", len(r.Mounts)}, {"the createContainer hooks", len(r.Hooks)}, {"root.path", chroot}} {
		if p.n > RootfsMax {
			return nil, fmt.Errorf("%s: %d bytes, over the %d the launcher takes", p.what, p.n, RootfsMax)
		}
	}
	b := make([]byte, 16, 16+len(r.Mounts)+len(r.Hooks)+chroot)
	binary.NativeEndian.PutUint32(b[0:], uint32(r.Flags))
	binary.NativeEndian.PutUint32(b[4:], uint32(len(r.Mounts)))
	binary.NativeEndian.PutUint32(b[8:], uint32(len(r.Hooks)))
	binary.NativeEndian.PutUint32(b[12:], uint32(chroot))
	b = append(append(b, r.Mounts...), r.Hooks...)
	if chroot > 0 {
		b = append(append(b, r.Chroot...), 0)
	}
	return b, nil
}

// DecodeRootfs is Encode's inverse (the tests' peer reads CONFIG with
// it; nsenter/build.c is the launcher's own reader).
func DecodeRootfs(b []byte) (*Rootfs, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("CONFIG of %d bytes, shorter than its head", len(b))
	}
	r := &Rootfs{Flags: RootfsFlags(binary.NativeEndian.Uint32(b[0:]))}
	n := [3]uint64{}
	for i := range n {
		n[i] = uint64(binary.NativeEndian.Uint32(b[4+4*i:]))
	}
	if 16+n[0]+n[1]+n[2] != uint64(len(b)) {
		return nil, fmt.Errorf("CONFIG of %d bytes, its head says %d", len(b), 16+n[0]+n[1]+n[2])
	}
	if r.Flags&^rootfsFlags != 0 {
		return nil, fmt.Errorf("CONFIG with unknown flags %#x", uint32(r.Flags))
	}
	p := b[16:]
	r.Mounts, p = p[:n[0]:n[0]], p[n[0]:]
	r.Hooks, p = p[:n[1]:n[1]], p[n[1]:]
	if len(p) > 0 {
		if p[len(p)-1] != 0 {
			return nil, fmt.Errorf("CONFIG: root.path without its NUL")
		}
		r.Chroot = string(p[:len(p)-1])
	}
	return r, nil
}
