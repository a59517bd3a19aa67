package libcontainer

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
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
