package launch

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// The mount plan: config.json's mounts[] as the launcher makes them
// (nsenter/mounts.c), each decided here with the rules Go init follows
// today (libcontainer/rootfs: mount.go, bind.go, tmpfs.go), so that the
// launcher only executes. Not on the launch path yet
// (docs/plan-rootfs-in-launcher.md).

// MountEnv is what a mount plan needs beyond the config.
type MountEnv struct {
	// Fds are the fds of the bind sources the parent opened
	// (configs.Config.SourceOutside), by index in mounts[].
	Fds map[int]int32
	// Cgroups is the container's /proc/PID/cgroup (rootfs.ParseOwnCgroups),
	// which a {"type": "cgroup"} mount needs: its hierarchies' names, and
	// without a cgroup namespace the directories it binds.
	Cgroups map[string]string
	// Pid is the launcher's, in the mount namespace it joined (a
	// linux.namespaces mount with a path): its mount table is the one
	// the plan's propagation is decided from. A new mount namespace is a
	// copy of the parent's, whose own table is read.
	Pid int
}

// NewMountPlan is cfg's mounts[] as the launcher's mount plan; nil when
// the container has no mount namespace of its own (nothing is mounted).
// Every value is checked, an error naming mounts[i] and the value.
func NewMountPlan(cfg *configs.Config, env MountEnv) (*bootstrap.MountPlan, error) {
	if _, ok := cfg.Namespace(configs.NEWNS); !ok {
		return nil, nil
	}
	root, err := filepath.EvalSymlinks(cfg.Rootfs)
	if err != nil {
		return nil, fmt.Errorf("root.path: %w", err)
	}
	if len(root) >= bootstrap.MountsMaxStr {
		return nil, fmt.Errorf("root.path %q: over %d bytes", root, bootstrap.MountsMaxStr-1)
	}
	table, err := mountTable(cfg, env.Pid) // once, for every decision that looks at it
	if err != nil {
		return nil, fmt.Errorf("the mount table: %w", err)
	}
	plan := &bootstrap.MountPlan{Root: root}
	if plan.Prepare, err = prepareStep(cfg, root, table); err != nil {
		return nil, err
	}
	for i, m := range cfg.Mounts {
		steps, err := mountSteps(cfg, i, m, env, table)
		if err != nil {
			return nil, err
		}
		plan.Mounts = append(plan.Mounts, steps...)
	}
	after, err := afterMounts(cfg)
	if err != nil {
		return nil, err
	}
	plan.Mounts = append(plan.Mounts, after...)
	if n := len(plan.Mounts); n > bootstrap.MountsMaxCount {
		return nil, fmt.Errorf("mounts and devices: %d steps, over the %d husk's launcher takes", n, bootstrap.MountsMaxCount)
	}
	return plan, nil
}

// afterMounts are Go init's steps after the mounts (buildRoot): a /dev
// tmpfs's nodes (linux.devices) and symlinks, then a missing process.cwd.
func afterMounts(cfg *configs.Config) ([]bootstrap.MountStep, error) {
	var steps []bootstrap.MountStep
	if dev, devpts := rootfs.SetsUpDev(cfg); dev {
		for i, d := range cfg.Devices {
			mode, err := rootfs.DeviceMode(d)
			if err != nil {
				return nil, fmt.Errorf("devices[%d] %q: %w", i, d.Path, err)
			}
			if !strings.HasPrefix(d.Path, "/") || strings.HasSuffix(d.Path, "/") || len(d.Path) >= bootstrap.MountsMaxStr || strings.IndexByte(d.Path, 0) >= 0 {
				return nil, fmt.Errorf("devices[%d].path %q: not a clean absolute path under %d bytes", i, d.Path, bootstrap.MountsMaxStr)
			}
			steps = append(steps, bootstrap.MountStep{Destination: d.Path, Device: &bootstrap.MountDevice{
				Index: uint32(i), Mode: mode, Rdev: unix.Mkdev(uint32(d.Major), uint32(d.Minor)), UID: d.UID, GID: d.GID}})
		}
		for _, l := range rootfs.DevLinks(devpts) {
			s := bootstrap.MountStep{Kind: bootstrap.MountSymlink, Dest: bootstrap.DestDir, Fd: -1, Destination: "/dev",
				Source: l[1], Data: l[0], Head: fmt.Sprintf("/dev symlinks: %s -> %s", l[0], l[1])}
			if l[0] == "ptmx" {
				s.Opts = bootstrap.MountReplace
			}
			steps = append(steps, s)
		}
	}
	if p := cfg.Process; p != nil && p.Cwd != "" {
		s := bootstrap.MountStep{Kind: bootstrap.MountMkdir, Dest: bootstrap.DestDir, Fd: -1, Destination: p.Cwd,
			Head: fmt.Sprintf("process.cwd %q: make it in the rootfs", p.Cwd)}
		if err := checkMountStep("process.cwd", &s); err != nil {
			return nil, err
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// mountSteps decides how mounts[i] is made: one step, or more for a
// cgroup mount (cgroupSteps).
func mountSteps(cfg *configs.Config, i int, m *configs.Mount, env MountEnv, table rootfs.Mounts) ([]bootstrap.MountStep, error) {
	field := fmt.Sprintf("mounts[%d]", i)
	flags := m.Flags
	if rootfs.IsReadonlyDev(m) {
		flags &^= unix.MS_RDONLY // made read-only once /dev is filled
	}
	s := bootstrap.MountStep{
		Index: uint32(i), Flags: uint32(flags), Cleared: uint32(m.ClearedFlags),
		RecSet: m.RecAttrSet, RecClr: m.RecAttrClr, Fd: -1, Destination: m.Destination,
		Head: rootfs.MountErrorHead(i, m),
	}
	if len(m.PropagationFlags) > bootstrap.MountsMaxProp {
		return nil, fmt.Errorf("%s: %d propagation options, over the %d husk's launcher takes", field, len(m.PropagationFlags), bootstrap.MountsMaxProp)
	}
	for _, p := range m.PropagationFlags {
		s.Propagation = append(s.Propagation, uint32(p))
	}
	switch {
	case cfg.SourceOutside(m):
		// Opened by the parent in the container's mount namespace when
		// the launcher asks (MOUNT_SOURCE), after the mounts before it:
		// a tree cloned before "/" got its propagation would stay the
		// host's peer. Env.Fds gives it beforehand (the tests' own).
		s.Kind, s.Dest, s.Fd, s.Source = bootstrap.MountBindFd, bootstrap.DestBySource, -1, m.Source
		if fd, ok := env.Fds[i]; ok && fd >= 0 {
			s.Fd = fd
		} else {
			s.Opts |= bootstrap.MountAsk
		}
		if m.IDMap != nil {
			s.Opts |= bootstrap.MountDetached
		}
	case m.IsBind() || m.Device == "bind":
		bindStep(cfg, &s, m.Source)
	case m.Device == "cgroup":
		steps, err := cgroupSteps(cfg, m, s, env.Cgroups, table)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", field, m.Destination, err)
		}
		for k := range steps {
			if err := checkMountStep(field, &steps[k]); err != nil {
				return nil, err
			}
		}
		return steps, nil
	default:
		s.Kind, s.Dest = bootstrap.MountFS, bootstrap.DestDir
		s.Source, s.FSType, s.Data = rootfs.MountSource(m), m.Device, rootfs.LabelledData(m, cfg.MountLabel)
		s.Fallback = rootfs.HostFallback(cfg, m)
		if cfg.MountLabel != "" {
			s.Opts |= bootstrap.MountLabelled
			if rootfs.LabelsRoot(m) {
				s.RootLabel = cfg.MountLabel
			}
		}
		switch m.Device {
		case "proc", "sysfs":
			s.Dest = bootstrap.DestRealDir
		case "tmpfs":
			s.Dest = bootstrap.DestCovered
			if !rootfs.HasOption(m.Data, "mode") {
				s.Opts |= bootstrap.MountTmpfsMode
			}
			if m.CopyUp {
				s.Opts |= bootstrap.MountCopyUp
			}
		}
		if err := legacyStep(m, &s); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", field, m.Destination, err)
		}
	}
	return []bootstrap.MountStep{s}, checkMountStep(field, &s)
}

// prepareStep is Go init's prepareRoot, decided here from the parent's
// mount table, which the container's mount namespace copies: "/" gets
// linux.rootfsPropagation (rslave by default), then isolateRoot's mount
// points their propagation. Whether a mount is shared after "/" got its
// flags is known without looking: recursive flags decide it for every
// mount, others only for "/"; a copy made with a new user namespace
// turns shared mounts into slaves.
func prepareStep(cfg *configs.Config, root string, table rootfs.Mounts) (*bootstrap.MountPrepare, error) {
	flags := unix.MS_SLAVE | unix.MS_REC
	if cfg.RootPropagation != 0 {
		flags = cfg.RootPropagation
	}
	mounts := table.Parents(root)
	// A new user namespace turns the copy's shared mounts into slaves; a
	// joined mount namespace's table says what they are already.
	userns := cfg.NewNamespace(configs.NEWUSER) && cfg.NewNamespace(configs.NEWNS)
	shared := func(m *mountinfo.Info) bool {
		if flags&unix.MS_REC != 0 || m.Mountpoint == "/" {
			return flags&unix.MS_SHARED != 0
		}
		return strings.Contains(m.Optional, "shared:") && !userns
	}
	p := &bootstrap.MountPrepare{RootFlags: uint32(flags), NoPivot: cfg.NoPivotRoot}
	if cfg.NoPivotRoot {
		for _, m := range table.HostProcSys(root) {
			p.Hide = append(p.Hide, bootstrap.HiddenMount{FSType: m.FSType, Path: m.Mountpoint})
		}
	}
	if rp := cfg.RootPropagation; rp != 0 && rp&unix.MS_PRIVATE == 0 { // enterRoot's rule
		p.After = uint32(rp)
	}
	for _, pt := range rootfs.IsolatePoints(mounts, root, flags, shared) {
		p.Points = append(p.Points, bootstrap.MountPoint{Path: pt.Mountpoint, Flags: uint32(pt.Flags)})
	}
	return p, nil
}

// bindStep makes s a bind of source: resolved inside the rootfs when it
// lies there (rootfs.OpenSource's rule), else the host's path.
func bindStep(cfg *configs.Config, s *bootstrap.MountStep, source string) {
	s.Kind, s.Dest, s.Source = bootstrap.MountBind, bootstrap.DestBySource, source
	if in, ok := rootfs.SourceInRoot(cfg.Rootfs, source); ok {
		s.Source, s.Opts = in, s.Opts|bootstrap.MountInRoot
	}
}

// legacyStep makes filesystem step s a mount(2), as runc's, for what
// fsconfig(2) cannot say: remount, iversion, an option over its bound.
// The mount then has no fd of its own: tmpcopyup and a label on its root
// (mqueue) are refused with it.
func legacyStep(m *configs.Mount, s *bootstrap.MountStep) error {
	long := false
	for _, o := range SplitMountData(s.Data) {
		key, value, _ := strings.Cut(o, "=")
		long = long || len(key) >= bootstrap.MountsMaxOpt || len(value) >= bootstrap.MountsMaxOpt
	}
	if m.Flags&(unix.MS_REMOUNT|unix.MS_I_VERSION) == 0 && !long {
		return nil
	}
	if s.Opts&bootstrap.MountCopyUp != 0 || s.RootLabel != "" {
		return fmt.Errorf("remount, iversion or an option over %d bytes: not with tmpcopyup or a label on the mount's root", bootstrap.MountsMaxOpt-1)
	}
	s.Opts |= bootstrap.MountLegacy
	return nil
}

// checkMountStep refuses what the launcher's parser would: strings past
// their bounds or with a NUL, a data option fsconfig(2) cannot take.
func checkMountStep(field string, s *bootstrap.MountStep) error {
	for _, f := range []struct{ name, v string }{
		{"destination", s.Destination}, {"source", s.Source}, {"type", s.FSType}, {"options", s.Data},
		{"linux.mountLabel", s.RootLabel},
	} {
		if strings.IndexByte(f.v, 0) >= 0 {
			return fmt.Errorf("%s.%s %q: contains a NUL byte", field, f.name, f.v)
		}
		if len(f.v) >= bootstrap.MountsMaxStr {
			return fmt.Errorf("%s.%s: %d bytes, over the %d husk's launcher takes", field, f.name, len(f.v), bootstrap.MountsMaxStr-1)
		}
	}
	if !strings.HasPrefix(s.Destination, "/") {
		return fmt.Errorf("%s.destination %q: not absolute", field, s.Destination)
	}
	if s.Opts&bootstrap.MountLegacy != 0 {
		return nil // mount(2) takes the data whole
	}
	for _, o := range SplitMountData(s.Data) {
		key, value, _ := strings.Cut(o, "=")
		if len(key) >= bootstrap.MountsMaxOpt || len(value) >= bootstrap.MountsMaxOpt {
			return fmt.Errorf("%s.options %q: over the %d bytes fsconfig(2) takes for a key or a value", field, o, bootstrap.MountsMaxOpt-1)
		}
	}
	return nil
}

// SplitMountData splits a mount's data into its options as the
// launcher does (nsenter/mounts.c) before giving each to fsconfig(2): at
// the commas outside double quotes, empty options dropped, a value's
// enclosing quotes removed (context="a,b" is context a,b).
func SplitMountData(data string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, unquoteValue(cur.String()))
		}
		cur.Reset()
	}
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			quoted = !quoted
			cur.WriteByte(c)
		case c == ',' && !quoted:
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// unquoteValue removes the double quotes around an option's value.
func unquoteValue(o string) string {
	key, value, ok := strings.Cut(o, "=")
	if ok && len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
		return key + "=" + value[1:len(value)-1]
	}
	return o
}

// mountTable is the table the plan is decided from: the parent's, which a
// new mount namespace copies, or the launcher's (pid) in a joined one.
func mountTable(cfg *configs.Config, pid int) (rootfs.Mounts, error) {
	if cfg.NewNamespace(configs.NEWNS) {
		return rootfs.ReadMounts()
	}
	if pid <= 0 {
		return nil, fmt.Errorf("linux.namespaces: a joined mount namespace: the launcher's pid is not known")
	}
	return rootfs.ReadMountsOf(pid)
}
