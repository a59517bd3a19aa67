package libcontainer

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/proc"
	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The built-in CNI path (see package cni): create attaches the container
// before init starts and points its network namespace at the netns made
// for it, so init joins it by path like any other joined namespace;
// destroy and undoCreate detach it.

// attachNetwork runs the CNI ADD that req asks for (nil: none) in a netns
// made for the container, and returns cfg joining that netns.
func (c *Container) attachNetwork(cfg *configs.Config, req *cni.Request, o cni.Options) (*configs.Config, error) {
	if req == nil {
		return cfg, nil
	}
	path, err := cni.Attach(c.dir, c.ID, req, o)
	if err != nil {
		return nil, fmt.Errorf("create container %s: %w", c.ID, err)
	}
	logrus.Debugf("container %s: CNI network %q attached in %s", c.ID, req.Network, path)
	return withNetns(cfg, path), nil
}

// withNetns is a copy of cfg whose network namespace is the one at path:
// init joins it like any namespace given by path (the bootstrap message
// and rootfs read it so), and the state records it.
func withNetns(cfg *configs.Config, path string) *configs.Config {
	c := *cfg
	c.Namespaces = slices.Clone(cfg.Namespaces)
	for i := range c.Namespaces {
		if c.Namespaces[i].Type == configs.NEWNET {
			c.Namespaces[i].Path = path
		}
	}
	return &c
}

// detachNetwork runs the CNI DEL and removes the netns, if the container
// has a CNI network. With force a failed DEL is only logged.
func (c *Container) detachNetwork(force bool) error {
	if err := cni.Detach(c.dir, force); err != nil {
		return fmt.Errorf("container %s: %w", c.ID, err)
	}
	return nil
}

// Network is the container's CNI attachment (nil: none), as `state` shows.
func (c *Container) Network() *cni.Record {
	rec, err := cni.LoadRecord(c.dir)
	if err != nil {
		logrus.Warnf("container %s: %v", c.ID, err)
	}
	return rec
}

// CheckNetwork runs the CNI CHECK of the container's network.
func (c *Container) CheckNetwork() error {
	if err := cni.CheckAttached(c.dir); err != nil {
		return fmt.Errorf("container %s: %w", c.ID, err)
	}
	return nil
}

// RemoveUnfinished removes what a create killed before it saved its state
// left under root/id: the CNI network it attached, then the dir itself.
// It is `delete --force` on a container that does not exist.
func RemoveUnfinished(root, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	dir := filepath.Join(root, id)
	if err := cni.Detach(dir, true); err != nil {
		return fmt.Errorf("container %s: %w", id, err)
	}
	return removeStateDir(dir)
}

// linux.netDevices: host network devices moved into the container's
// network namespace once its init exists, before its process starts, and
// moved back when the container is deleted.
//
// As the runtime-spec asks, a device keeps its permanent addresses (the
// kernel drops them on the move: they are re-added inside) and its up
// state; it is renamed to the configured name. Back on the host it gets
// its own name again, without the addresses.

// moveNetDevices moves cfg's devices into the network namespace of pid.
// On failure the devices already moved are moved back.
func moveNetDevices(cfg *configs.Config, pid int) error {
	if len(cfg.NetDevices) == 0 {
		return nil
	}
	hosts := slices.Sorted(maps.Keys(cfg.NetDevices))
	links := make([]netlink.Link, len(hosts))
	for i, host := range hosts {
		link, err := netlink.LinkByName(host)
		if err != nil {
			return fmt.Errorf("linux.netDevices[%q]: no such device on the host: %w", host, err)
		}
		links[i] = link
	}
	nsPath := "/proc/" + strconv.Itoa(pid) + "/ns/net"
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("linux.netDevices: open the container's network namespace %s: %w", nsPath, err)
	}
	defer ns.Close()
	inside, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("linux.netDevices: netlink in the container's network namespace: %w", err)
	}
	defer inside.Close()
	for i, host := range hosts {
		if err := moveIn(inside, int(ns), links[i], cfg.NetDevices[host].Name); err != nil {
			for _, done := range hosts[:i] {
				moveOut(inside, done, cfg.NetDevices[done].Name)
			}
			return fmt.Errorf("linux.netDevices[%q]: %w", host, err)
		}
	}
	return nil
}

// moveIn moves link into the namespace ns (reached with inside), renames
// it to name if set, and restores its permanent addresses and up state.
func moveIn(inside *netlink.Handle, ns int, link netlink.Link, name string) error {
	host := link.Attrs().Name
	addrs, err := netlink.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return fmt.Errorf("list addresses: %w", err)
	}
	up := link.Attrs().Flags&net.FlagUp != 0
	if err := netlink.LinkSetNsFd(link, ns); err != nil {
		return fmt.Errorf("move into the container's network namespace: %w", err)
	}
	moved, err := inside.LinkByName(host)
	if err != nil {
		return fmt.Errorf("find it in the container: %w", err)
	}
	if name != "" && name != host {
		if err := inside.LinkSetName(moved, name); err != nil {
			moveOut(inside, host, "")
			return fmt.Errorf("rename to %q: %w", name, err)
		}
	}
	for _, a := range addrs {
		if a.Flags&unix.IFA_F_PERMANENT == 0 {
			continue
		}
		a.Label = "" // the label carries the old name
		if err := inside.AddrAdd(moved, &a); err != nil {
			moveOut(inside, host, name)
			return fmt.Errorf("restore address %s: %w", a.IPNet, err)
		}
	}
	if up {
		if err := inside.LinkSetUp(moved); err != nil {
			moveOut(inside, host, name)
			return fmt.Errorf("set up: %w", err)
		}
	}
	return nil
}

// moveOut moves the device called name (host when empty) in the namespace
// of inside back to the host's, as host. Best effort: it logs failures.
func moveOut(inside *netlink.Handle, host, name string) {
	if name == "" {
		name = host
	}
	link, err := inside.LinkByName(name)
	if err != nil {
		logrus.Debugf("linux.netDevices[%q]: %q is not in the container: %v", host, name, err)
		return
	}
	// Renamed first, where the host's name is surely free, and down: a
	// device must be down to be renamed.
	if name != host {
		inside.LinkSetDown(link)
		if err := inside.LinkSetName(link, host); err != nil {
			logrus.Warnf("linux.netDevices[%q]: rename %q back: %v", host, name, err)
		}
	}
	hostNs, err := netns.GetFromPath("/proc/self/ns/net")
	if err != nil {
		logrus.Warnf("linux.netDevices[%q]: open the host's network namespace: %v", host, err)
		return
	}
	defer hostNs.Close()
	if err := inside.LinkSetNsFd(link, int(hostNs)); err != nil {
		logrus.Warnf("linux.netDevices[%q]: move back to the host: %v", host, err)
	}
}

// returnNetDevices moves the container's devices back to the host, while
// its network namespace is still reachable: through its init while alive,
// or the namespace path it joined. With init gone from a namespace of its
// own, the kernel has already destroyed the virtual devices and moved the
// physical ones back; those get their host names again here.
func (c *Container) returnNetDevices() {
	st := c.State
	if st == nil || st.Config == nil || len(st.Config.NetDevices) == 0 {
		return
	}
	path := ""
	if ns, ok := st.Config.Namespace(configs.NEWNET); ok && ns.Path != "" {
		path = ns.Path
	}
	if st.InitPid > 0 && proc.Alive(st.InitPid, st.InitStart) {
		path = "/proc/" + strconv.Itoa(st.InitPid) + "/ns/net"
	}
	devs := st.Config.NetDevices
	if path == "" {
		for _, host := range slices.Sorted(maps.Keys(devs)) {
			if name := devs[host].Name; name != "" && name != host {
				if link, err := netlink.LinkByName(name); err == nil {
					netlink.LinkSetDown(link)
					netlink.LinkSetName(link, host)
				}
			}
		}
		return
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		logrus.Warnf("linux.netDevices: open %s: %v", path, err)
		return
	}
	defer ns.Close()
	inside, err := netlink.NewHandleAt(ns)
	if err != nil {
		logrus.Warnf("linux.netDevices: netlink in %s: %v", path, err)
		return
	}
	defer inside.Close()
	for _, host := range slices.Sorted(maps.Keys(devs)) {
		moveOut(inside, host, devs[host].Name)
	}
}
