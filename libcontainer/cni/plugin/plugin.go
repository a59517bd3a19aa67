// Package plugin runs CNI plugins with libcni, the library containerd
// uses: the ADD, DEL and CHECK of package cni's calls. Only the helper
// binary husk-cni (cmd/husk-cni) links it; husk itself never does.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/containernetworking/cni/libcni"
	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/sirupsen/logrus"
)

type (
	// Options and Request are the cni package's: husk's flags and the
	// container's annotations.
	Options = cni.Options
	Request = cni.Request
)

func newLibcni(o Options) *libcni.CNIConfig {
	return libcni.NewCNIConfigWithCacheDir(o.BinDirs, o.CacheDir, nil)
}

// loadList reads the network list r.Network from the conf dir.
func loadList(o Options, network string) (*libcni.NetworkConfigList, error) {
	list, err := libcni.LoadNetworkConf(o.ConfDir, network)
	if err != nil {
		return nil, fmt.Errorf("CNI network %q in %s: %w", network, o.ConfDir, err)
	}
	return list, nil
}

func runtimeConf(r *Request, id, netns string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{
		ContainerID:    id,
		NetNS:          netns,
		IfName:         r.IfName,
		Args:           r.Args,
		CapabilityArgs: r.Capabilities,
	}
}

// Add runs the CNI ADD of r's network list for container id in netns and
// returns the result as JSON. A failed ADD is undone with a DEL (whose
// own failure is only logged) before the ADD's error is returned.
func Add(ctx context.Context, o Options, r *Request, id, netns string) (json.RawMessage, error) {
	list, err := loadList(o, r.Network)
	if err != nil {
		return nil, err
	}
	lib := newLibcni(o)
	rt := runtimeConf(r, id, netns)
	result, err := lib.AddNetworkList(ctx, list, rt)
	if err != nil {
		if derr := delList(ctx, lib, list, rt); derr != nil {
			logrus.Warnf("CNI DEL after the failed ADD: %v", derr)
		}
		return nil, fmt.Errorf("CNI ADD of network %q: %w", r.Network, err)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("CNI ADD of network %q: encode result: %w", r.Network, err)
	}
	return data, nil
}

// Del runs the CNI DEL of r for container id with the configuration libcni
// cached at ADD, so it works even if the list was since edited or removed.
// Without a cache entry (the ADD never finished) it uses the list in the
// conf dir. netns may be "" once the namespace is gone.
func Del(ctx context.Context, o Options, r *Request, id, netns string) error {
	lib := newLibcni(o)
	list, rt, err := cachedList(lib, r, id, netns)
	if err != nil {
		return err
	}
	if list == nil {
		if list, err = loadList(o, r.Network); err != nil {
			return fmt.Errorf("CNI DEL (nothing cached, no list to fall back on): %w", err)
		}
	}
	if err := delList(ctx, lib, list, rt); err != nil {
		return fmt.Errorf("CNI DEL of network %q: %w", r.Network, err)
	}
	return nil
}

// Check runs the CNI CHECK of r for container id in netns, against the
// configuration and result cached at ADD.
func Check(ctx context.Context, o Options, r *Request, id, netns string) error {
	lib := newLibcni(o)
	list, rt, err := cachedList(lib, r, id, netns)
	if err != nil {
		return err
	}
	if list == nil {
		return fmt.Errorf("CNI CHECK of network %q: nothing cached for container %s in %s (was it ever added?)",
			r.Network, id, cacheDirName(o))
	}
	if err := lib.CheckNetworkList(ctx, list, rt); err != nil {
		return fmt.Errorf("CNI CHECK of network %q: %w", r.Network, err)
	}
	return nil
}

// cachedList is the network list and runtime config libcni cached at ADD,
// or nil if nothing is cached.
func cachedList(lib *libcni.CNIConfig, r *Request, id, netns string) (*libcni.NetworkConfigList, *libcni.RuntimeConf, error) {
	rt := runtimeConf(r, id, netns)
	data, cachedRt, err := lib.GetNetworkListCachedConfig(&libcni.NetworkConfigList{Name: r.Network}, rt)
	if err != nil {
		return nil, nil, fmt.Errorf("CNI cache of network %q: %w", r.Network, err)
	}
	if data == nil {
		return nil, rt, nil
	}
	list, err := libcni.NetworkConfFromBytes(data)
	if err != nil {
		return nil, nil, fmt.Errorf("CNI cache of network %q: %w", r.Network, err)
	}
	return list, cachedRt, nil
}

// delList runs DEL of the whole list; if that fails, it still runs DEL of
// each plugin on its own, last to first, so that one broken plugin (a
// binary missing) does not keep the others from releasing what they hold.
// The first error is returned.
func delList(ctx context.Context, lib *libcni.CNIConfig, list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) error {
	first := lib.DelNetworkList(ctx, list, rt)
	if first == nil {
		return nil
	}
	var errs []error
	for i := len(list.Plugins) - 1; i >= 0; i-- {
		one := *list
		one.Plugins = list.Plugins[i : i+1]
		if err := lib.DelNetworkList(ctx, &one, rt); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		logrus.Debugf("CNI DEL plugin by plugin: %v", errors.Join(errs...))
	}
	return first
}

func cacheDirName(o Options) string {
	if o.CacheDir != "" {
		return o.CacheDir
	}
	return libcni.CacheDir
}
