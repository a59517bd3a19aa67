// Command husk-cni is husk's CNI helper: it runs the network plugins of
// husk's built-in CNI path and of `husk cni-hook` with libcni. husk calls
// it (installed beside the husk binary) with one operation, add, del or
// check, and a cni.Call as JSON on stdin; add answers with the CNI
// result. Keeping libcni here keeps it out of every other husk process.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
//go:debug decoratemappings=0
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/husk-runtime/husk/libcontainer/cni"
	"github.com/husk-runtime/husk/libcontainer/cni/plugin"
	"github.com/husk-runtime/husk/libcontainer/helper"
)

func main() {
	helper.Serve(cni.HelperName, map[string]func(context.Context, []byte) (any, error){
		"add": func(ctx context.Context, in []byte) (any, error) {
			c, err := decode(in)
			if err != nil {
				return nil, err
			}
			return plugin.Add(ctx, c.Options, &c.Request, c.ContainerID, c.Netns)
		},
		"del": func(ctx context.Context, in []byte) (any, error) {
			c, err := decode(in)
			if err != nil {
				return nil, err
			}
			return struct{}{}, plugin.Del(ctx, c.Options, &c.Request, c.ContainerID, c.Netns)
		},
		"check": func(ctx context.Context, in []byte) (any, error) {
			c, err := decode(in)
			if err != nil {
				return nil, err
			}
			return struct{}{}, plugin.Check(ctx, c.Options, &c.Request, c.ContainerID, c.Netns)
		},
	})
}

// decode reads the call husk sent.
func decode(in []byte) (*cni.Call, error) {
	var c cni.Call
	if err := json.Unmarshal(in, &c); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if c.Network == "" || c.ContainerID == "" {
		return nil, fmt.Errorf("request: no network or container id in %s", in)
	}
	return &c, nil
}
