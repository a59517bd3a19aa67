package cni

import (
	"context"
	"encoding/json"

	"github.com/husk-runtime/husk/libcontainer/helper"
)

// The plugins run in the helper binary husk-cni (cmd/husk-cni, package
// cni/plugin), so that libcni and what it links (net/http, crypto/tls,
// OpenTelemetry, ...) are initialised only by the commands that attach a
// network, never by every husk start and exec.

// HelperName is the helper that runs the plugins: husk-cni.
const HelperName = "cni"

// Options say where network lists, plugins and libcni's cache are: husk's
// global flags --cni-conf-dir, --cni-bin-dir and --cni-cache-dir.
type Options struct {
	ConfDir  string   `json:"conf_dir"`
	BinDirs  []string `json:"bin_dirs"`
	CacheDir string   `json:"cache_dir,omitempty"` // "": libcni's /var/lib/cni
}

// Call is one ADD, DEL or CHECK: what husk sends husk-cni.
type Call struct {
	Request
	ContainerID string  `json:"container_id"`
	Netns       string  `json:"netns"`
	Options     Options `json:"options"`
}

// Add runs the CNI ADD of r's network list for container id in netns and
// returns the result as JSON. A failed ADD is undone with a DEL (whose
// own failure is only logged) before the ADD's error is returned.
func Add(ctx context.Context, o Options, r *Request, id, netns string) (json.RawMessage, error) {
	var result json.RawMessage
	err := helper.Run(ctx, HelperName, "add", &Call{Request: *r, ContainerID: id, Netns: netns, Options: o}, &result)
	return result, err
}

// Del runs the CNI DEL of r for container id with the configuration libcni
// cached at ADD, so it works even if the list was since edited or removed.
// Without a cache entry (the ADD never finished) it uses the list in the
// conf dir. netns may be "" once the namespace is gone.
func Del(ctx context.Context, o Options, r *Request, id, netns string) error {
	return helper.Run(ctx, HelperName, "del", &Call{Request: *r, ContainerID: id, Netns: netns, Options: o}, nil)
}

// Check runs the CNI CHECK of r for container id in netns, against the
// configuration and result cached at ADD.
func Check(ctx context.Context, o Options, r *Request, id, netns string) error {
	return helper.Run(ctx, HelperName, "check", &Call{Request: *r, ContainerID: id, Netns: netns, Options: o}, nil)
}
