package nsenter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
)

// refPlan is a reference decoder of the PLAN frame, written apart from
// plan.c and in Go, for the fuzz target: it must agree with the C parser
// on every frame the C parser accepts.
func refPlan(b []byte) (*bootstrap.Plan, error) {
	if len(b) > bootstrap.PlanMax {
		return nil, errors.New("too big")
	}
	p := &bootstrap.Plan{}
	seen := map[uint32]bool{}
	for off := 0; off < len(b); {
		if len(b)-off < 8 {
			return nil, errors.New("truncated header")
		}
		typ := binary.NativeEndian.Uint32(b[off:])
		n := int(binary.NativeEndian.Uint32(b[off+4:]))
		rest := b[off+8:]
		if n > len(rest) || (n+7)/8*8 > len(rest) {
			return nil, errors.New("past the end")
		}
		if !allZero(rest[n : (n+7)/8*8]) {
			return nil, errors.New("padding")
		}
		if seen[typ] && typ != bootstrap.RecRlimit {
			return nil, errors.New("twice")
		}
		seen[typ] = true
		if err := refRecord(p, typ, rest[:n]); err != nil {
			return nil, err
		}
		off += 8 + (n+7)/8*8
	}
	for _, t := range []uint32{bootstrap.RecArgs, bootstrap.RecEnv, bootstrap.RecCwd, bootstrap.RecUID,
		bootstrap.RecGID, bootstrap.RecUmask, bootstrap.RecCaps} {
		if !seen[t] {
			return nil, errors.New("missing")
		}
	}
	if seen[bootstrap.RecSysctl] && !seen[bootstrap.RecUTS] {
		return nil, errors.New("SYSCTL without UTS")
	}
	if (seen[bootstrap.RecMasked] || seen[bootstrap.RecRdonly] || seen[bootstrap.RecMountLabel]) && !seen[bootstrap.RecRootfs] {
		return nil, errors.New("rootfs records without ROOTFS")
	}
	if len(p.Args) == 0 || (p.Seccomp != nil && !seen[bootstrap.RecSeccompFlags]) {
		return nil, errors.New("no args, or a filter without flags")
	}
	return p, nil
}

func refRecord(p *bootstrap.Plan, typ uint32, v []byte) error {
	u32 := func(dst *uint32) error {
		if len(v) != 4 {
			return errors.New("size")
		}
		*dst = binary.NativeEndian.Uint32(v)
		return nil
	}
	flag := func(dst *bool) error {
		if len(v) != 0 {
			return errors.New("size")
		}
		*dst = true
		return nil
	}
	switch typ {
	case bootstrap.RecArgs:
		return refList(v, &p.Args)
	case bootstrap.RecEnv:
		return refList(v, &p.Env)
	case bootstrap.RecCwd:
		return refString(v, &p.Cwd)
	case bootstrap.RecPath:
		return refString(v, &p.Path)
	case bootstrap.RecAppArmor:
		return refString(v, &p.AppArmor)
	case bootstrap.RecSELinux:
		return refString(v, &p.SELinux)
	case bootstrap.RecUID:
		return u32(&p.UID)
	case bootstrap.RecGID:
		return u32(&p.GID)
	case bootstrap.RecUmask:
		return u32(&p.Umask)
	case bootstrap.RecSeccompFlags:
		return u32(&p.SeccompFlags)
	case bootstrap.RecPersonality:
		p.Personality = new(uint32)
		return u32(p.Personality)
	case bootstrap.RecNoNewPrivs:
		return flag(&p.NoNewPrivs)
	case bootstrap.RecHome:
		return flag(&p.FillHome)
	case bootstrap.RecKeyring:
		return flag(&p.Keyring)
	case bootstrap.RecGroups:
		if len(v)%4 != 0 || len(v)/4 > 65536 {
			return errors.New("groups")
		}
		for i := 0; i < len(v); i += 4 {
			p.Groups = append(p.Groups, binary.NativeEndian.Uint32(v[i:]))
		}
		return nil
	case bootstrap.RecSeccomp:
		if len(v) == 0 || len(v)%8 != 0 || len(v) > 4096*8 {
			return errors.New("filter")
		}
		p.Seccomp = bytes.Clone(v)
		return nil
	case bootstrap.RecAffinity:
		return refMask(v, &p.Affinity)
	case bootstrap.RecMemPolicy:
		if len(v) < 8 {
			return errors.New("mempolicy")
		}
		p.MemPolicy = &bootstrap.PlanMemPolicy{Mode: int32(binary.NativeEndian.Uint32(v)), Flags: int32(binary.NativeEndian.Uint32(v[4:]))}
		if len(v) == 8 {
			return nil
		}
		return refMask(v[8:], &p.MemPolicy.Nodes)
	case bootstrap.RecRootfs, bootstrap.RecMasked, bootstrap.RecRdonly, bootstrap.RecMountLabel:
		return refRootfs(p, typ, v)
	case bootstrap.RecUTS, bootstrap.RecSysctl:
		return refSystem(p, typ, v)
	}
	return refFixed(p, typ, v)
}

// refSystem decodes the records of a container's namespaces (PlanSystem).
func refSystem(p *bootstrap.Plan, typ uint32, v []byte) error {
	if p.System == nil {
		p.System = &bootstrap.PlanSystem{}
	}
	var list []string
	if err := refList(v, &list); err != nil {
		return err
	}
	if typ == bootstrap.RecUTS {
		if len(list) != 2 || len(list[0]) >= bootstrap.PlanMaxName || len(list[1]) >= bootstrap.PlanMaxName {
			return errors.New("uts")
		}
		p.System.Hostname, p.System.Domainname = list[0], list[1]
		return nil
	}
	if len(list)%2 != 0 || len(list)/2 > bootstrap.PlanMaxSysctls {
		return errors.New("sysctls")
	}
	for i := 0; i < len(list); i += 2 {
		if list[i] == "" || len(list[i]) >= bootstrap.PlanMaxSysctl || len(list[i+1]) >= bootstrap.PlanMaxSysctl {
			return errors.New("sysctl")
		}
		p.System.Sysctls = append(p.System.Sysctls, bootstrap.PlanSysctl{Key: list[i], Value: list[i+1]})
	}
	return nil
}

// refRootfs decodes the records of a container's root (PlanRootfs).
func refRootfs(p *bootstrap.Plan, typ uint32, v []byte) error {
	if p.Rootfs == nil {
		p.Rootfs = &bootstrap.PlanRootfs{}
	}
	r := p.Rootfs
	switch typ {
	case bootstrap.RecRootfs:
		if len(v) < 4 {
			return errors.New("rootfs flags")
		}
		f := binary.NativeEndian.Uint32(v)
		r.ReadonlyRoot = f&2 != 0
		switch {
		case f&^3 != 0:
			return errors.New("rootfs flags")
		case f&1 == 0 && len(v) != 4:
			return errors.New("rootfs size")
		case f&1 == 0:
			return nil
		case len(v)-4 > 3*bootstrap.PlanMaxPath:
			return errors.New("rootfs name")
		}
		return refString(v[4:], &r.ReadonlyDev)
	case bootstrap.RecMountLabel:
		if len(v) > 4096 {
			return errors.New("label")
		}
		return refString(v, &r.MountLabel)
	}
	dst := &r.Masked
	if typ == bootstrap.RecRdonly {
		dst = &r.Readonly
	}
	if err := refList(v, dst); err != nil {
		return err
	}
	if len(*dst) > bootstrap.PlanMaxPaths {
		return errors.New("paths")
	}
	for _, path := range *dst {
		if !filepath.IsAbs(path) || filepath.Clean(path) != path || len(path) >= bootstrap.PlanMaxPath {
			return errors.New("path")
		}
	}
	return nil
}

// refFixed decodes the records of fixed size but for the u32 ones.
func refFixed(p *bootstrap.Plan, typ uint32, v []byte) error {
	u64 := func(i int) uint64 { return binary.NativeEndian.Uint64(v[i:]) }
	u32 := func(i int) uint32 { return binary.NativeEndian.Uint32(v[i:]) }
	want := map[uint32]int{bootstrap.RecRlimit: 24, bootstrap.RecCaps: 48, bootstrap.RecIOPrio: 8,
		bootstrap.RecSched: 48, bootstrap.RecTTY: 8}
	if typ == bootstrap.RecListener {
		if len(v) < 4 || u32(0) > bootstrap.PlanMaxHoles || len(v) <= 4+4*int(u32(0)) {
			return errors.New("listener")
		}
		n := int(u32(0))
		l := &bootstrap.PlanListener{Msg: bytes.Clone(v[4+4*n:])}
		for i := 0; i < n; i++ {
			at := u32(4 + 4*i)
			if int(at) > len(l.Msg) || (i > 0 && at < l.PidAt[i-1]) {
				return errors.New("hole")
			}
			l.PidAt = append(l.PidAt, at)
		}
		p.Listener = l
		return nil
	}
	if n, ok := want[typ]; !ok || len(v) != n {
		return fmt.Errorf("record %d of %d bytes", typ, len(v))
	}
	switch typ {
	case bootstrap.RecRlimit:
		if len(p.Rlimits) == 64 {
			return errors.New("rlimits")
		}
		p.Rlimits = append(p.Rlimits, bootstrap.PlanRlimit{Type: u32(0), Index: u32(4), Soft: u64(8), Hard: u64(16)})
	case bootstrap.RecCaps:
		p.Caps = bootstrap.PlanCaps{Bounding: u64(0), Effective: u64(8), Permitted: u64(16), Inheritable: u64(24), Ambient: u64(32), LastCap: u32(40)}
		if p.Caps.LastCap > 63 {
			return errors.New("last cap")
		}
	case bootstrap.RecIOPrio:
		p.IOPrio = &bootstrap.PlanIOPrio{Class: int32(u32(0)), Priority: int32(u32(4))}
	case bootstrap.RecSched:
		p.Sched = &bootstrap.PlanSched{Policy: u32(0), Nice: int32(u32(4)), Priority: u32(8),
			Cpuset: u32(12) != 0, Flags: u64(16), Runtime: u64(24), Deadline: u64(32), Period: u64(40)}
	case bootstrap.RecTTY:
		f := u32(0)
		p.TTY = &bootstrap.PlanTTY{Open: f&1 != 0, HasSize: f&2 != 0,
			Rows: binary.NativeEndian.Uint16(v[4:]), Cols: binary.NativeEndian.Uint16(v[6:])}
	}
	return nil
}

func refList(v []byte, dst *[]string) error {
	if len(v) > 0 && v[len(v)-1] != 0 {
		return errors.New("not terminated")
	}
	for len(v) > 0 {
		i := bytes.IndexByte(v, 0)
		*dst = append(*dst, string(v[:i]))
		v = v[i+1:]
	}
	return nil
}

func refString(v []byte, dst *string) error {
	if len(v) < 2 || v[len(v)-1] != 0 || bytes.IndexByte(v[:len(v)-1], 0) >= 0 {
		return errors.New("string")
	}
	*dst = string(v[:len(v)-1])
	return nil
}

func refMask(v []byte, dst *[]uint64) error {
	if len(v) == 0 || len(v)%8 != 0 || len(v)/8 > 128 {
		return errors.New("mask")
	}
	for i := 0; i < len(v); i += 8 {
		*dst = append(*dst, binary.NativeEndian.Uint64(v[i:]))
	}
	return nil
}

func allZero(b []byte) bool { return bytes.Count(b, []byte{0}) == len(b) }

// source hands out the bytes of a fuzz input as values (zeros once used
// up), to build a plan from it.
type source struct{ b []byte }

func (s *source) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *source) u32() uint32 {
	return uint32(s.byte()) | uint32(s.byte())<<8 | uint32(s.byte())<<16 | uint32(s.byte())<<24
}

func (s *source) u64() uint64 { return uint64(s.u32()) | uint64(s.u32())<<32 }

// str is a string without NUL of up to max bytes (at least min).
func (s *source) str(min, max int) string {
	n := min + int(s.byte())%(max-min+1)
	out := make([]byte, n)
	for i := range out {
		if out[i] = s.byte(); out[i] == 0 {
			out[i] = 'x'
		}
	}
	return string(out)
}

func (s *source) strs(min, max int) []string {
	var out []string
	for i, n := 0, min+int(s.byte())%(max-min+1); i < n; i++ {
		out = append(out, s.str(0, 12))
	}
	return out
}

func (s *source) u64s(min, max int) []uint64 {
	var out []uint64
	for i, n := 0, min+int(s.byte())%(max-min+1); i < n; i++ {
		out = append(out, s.u64())
	}
	return out
}

// planFrom builds a plan with every field drawn from b.
func planFrom(b []byte) *bootstrap.Plan {
	s := &source{b}
	on := func() bool { return s.byte()&1 == 1 }
	p := &bootstrap.Plan{
		Args: s.strs(1, 3), Env: s.strs(0, 3), FillHome: on(), Cwd: s.str(1, 16),
		UID: s.u32(), GID: s.u32(), Umask: s.u32(), NoNewPrivs: on(), Keyring: on(),
		Caps: bootstrap.PlanCaps{Bounding: s.u64(), Effective: s.u64(), Permitted: s.u64(),
			Inheritable: s.u64(), Ambient: s.u64(), LastCap: s.u32() % 64},
	}
	if on() {
		p.Path = s.str(1, 8)
	}
	for i, n := 0, int(s.byte()%4); i < n; i++ {
		p.Groups = append(p.Groups, s.u32())
	}
	for i, n := 0, int(s.byte()%3); i < n; i++ {
		p.Rlimits = append(p.Rlimits, bootstrap.PlanRlimit{Type: s.u32(), Index: s.u32(), Soft: s.u64(), Hard: s.u64()})
	}
	if on() {
		for i, n := 0, 8*(1+int(s.byte()%4)); i < n; i++ {
			p.Seccomp = append(p.Seccomp, s.byte())
		}
		p.SeccompFlags = s.u32()
	}
	if on() {
		p.Affinity = s.u64s(1, 3)
	}
	if on() {
		p.MemPolicy = &bootstrap.PlanMemPolicy{Mode: int32(s.u32()), Flags: int32(s.u32()), Nodes: s.u64s(0, 2)}
	}
	if on() {
		v := s.u32()
		p.Personality = &v
	}
	if on() {
		p.IOPrio = &bootstrap.PlanIOPrio{Class: int32(s.u32()), Priority: int32(s.u32())}
	}
	if on() {
		p.Sched = &bootstrap.PlanSched{Policy: s.u32(), Nice: int32(s.u32()), Priority: s.u32(),
			Cpuset: s.u32()%2 == 1, Flags: s.u64(), Runtime: s.u64(), Deadline: s.u64(), Period: s.u64()}
	}
	if on() {
		p.AppArmor, p.SELinux = s.str(1, 8), s.str(1, 8)
	}
	if on() {
		l := &bootstrap.PlanListener{Msg: []byte(s.str(1, 20))}
		for i, n, at := 0, int(s.byte()%5), uint32(0); i < n; i++ {
			at += uint32(s.byte()) % uint32(len(l.Msg)+1-int(at))
			l.PidAt = append(l.PidAt, at)
		}
		p.Listener = l
	}
	if on() {
		p.TTY = &bootstrap.PlanTTY{Open: on(), HasSize: on(), Rows: uint16(s.u32()), Cols: uint16(s.u32())}
	}
	if on() {
		r := &bootstrap.PlanRootfs{ReadonlyRoot: on()}
		for i, n := 0, int(s.byte()%3); i < n; i++ {
			r.Masked = append(r.Masked, filepath.Clean("/"+s.str(0, 8)))
		}
		for i, n := 0, int(s.byte()%3); i < n; i++ {
			r.Readonly = append(r.Readonly, filepath.Clean("/"+s.str(0, 8)))
		}
		if on() {
			r.MountLabel = s.str(1, 8)
		}
		if on() {
			r.ReadonlyDev = s.str(1, 8)
		}
		p.Rootfs = r
	}
	if on() {
		sys := &bootstrap.PlanSystem{Hostname: s.str(0, 8), Domainname: s.str(0, 8)}
		for i, n := 0, int(s.byte()%3); i < n; i++ {
			sys.Sysctls = append(sys.Sysctls, bootstrap.PlanSysctl{Key: s.str(1, 8), Value: s.str(0, 8)})
		}
		p.System = sys
	}
	return p
}

// checkAgainstAttrs: every field of m, which the C parser made of b, is a
// byte-exact copy of its own attribute's payload as the netlink package
// splits b.
func checkAgainstAttrs(t *testing.T, b []byte, m bootstrap.Message) {
	t.Helper()
	n := int(binary.NativeEndian.Uint32(b))
	// The last attribute's padding may lie past the message's end, which
	// the C parser allows; the netlink package wants it there.
	body := append(bytes.Clone(b[16:n]), make([]byte, (4-(n-16)%4)%4)...)
	attrs, err := nl.ParseRouteAttr(body)
	if err != nil {
		t.Fatalf("C accepted what the netlink package cannot split (%v): %x", err, b)
	}
	payload := map[int][]byte{}
	for _, a := range attrs {
		payload[int(a.Attr.Type)] = a.Value
	}
	str := func(typ int, got string) {
		v := bytes.TrimSuffix(payload[typ], []byte{0})
		if got != string(v) {
			t.Fatalf("attribute %d: C gave %q, its payload is %q", typ, got, v)
		}
	}
	str(bootstrap.AttrNsPaths, strings.Join(m.NsPaths, ","))
	str(bootstrap.AttrUIDMap, m.UIDMap)
	str(bootstrap.AttrGIDMap, m.GIDMap)
	str(bootstrap.AttrOomScoreAdj, m.OomScoreAdj)
	str(bootstrap.AttrTimensOffsets, m.TimeOffsets)
	var fds, mask []byte
	for _, fd := range m.CgroupTasks {
		fds = binary.NativeEndian.AppendUint32(fds, fd)
	}
	for _, w := range m.Affinity {
		mask = binary.NativeEndian.AppendUint64(mask, w)
	}
	var flags []byte
	if v, ok := payload[bootstrap.AttrCloneFlags]; ok {
		flags = binary.NativeEndian.AppendUint32(nil, m.CloneFlags)
		if !bytes.Equal(v, flags) {
			t.Fatalf("CLONE_FLAGS: C gave %#x, its payload is %x", m.CloneFlags, v)
		}
	} else if m.CloneFlags != 0 {
		t.Fatalf("CLONE_FLAGS %#x without the attribute", m.CloneFlags)
	}
	if !bytes.Equal(fds, payload[bootstrap.AttrCgroupTasks]) || !bytes.Equal(mask, payload[bootstrap.AttrAffinity]) {
		t.Fatalf("CGROUP_TASKS %v or AFFINITY %#x are not their payloads", m.CgroupTasks, m.Affinity)
	}
}

// messageFrom builds a bootstrap message with every field drawn from b.
func messageFrom(b []byte) bootstrap.Message {
	s := &source{b}
	names := []string{"user", "mnt", "uts", "ipc", "pid", "net", "cgroup", "time"}
	m := bootstrap.Message{CloneFlags: s.u32() & (unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET)}
	for i, n := 0, int(s.byte()%4); i < n; i++ {
		m.NsPaths = append(m.NsPaths, names[s.byte()%8]+":/"+strings.NewReplacer(",", "x").Replace(s.str(0, 12)))
	}
	for _, f := range []*string{&m.UIDMap, &m.GIDMap, &m.OomScoreAdj, &m.TimeOffsets} {
		if s.byte()&1 == 1 {
			*f = s.str(1, 20)
		}
	}
	for i, n := 0, int(s.byte()%4); i < n; i++ {
		m.CgroupTasks = append(m.CgroupTasks, 3+s.u32()%1000)
	}
	if s.byte()&1 == 1 {
		m.Affinity = s.u64s(1, 3)
	}
	return m
}
