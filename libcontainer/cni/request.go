// Package cni attaches containers to CNI networks with libcni, the library
// containerd uses. It is off unless a container asks for it through
// annotations of its config.json:
//
//	io.husk.cni.network       the name of a network list in --cni-conf-dir
//	                          (husk's built-in path: husk makes the netns)
//	io.husk.cni.hook.network  the same, for `husk cni-hook` (any runtime)
//	io.husk.cni.ifname        the interface in the container (default eth0)
//	io.husk.cni.args          CNI_ARGS, "K=V;K2=V2"
//	io.husk.cni.capabilities  a JSON object passed as runtimeConfig
//	                          (portMappings, ipRanges, bandwidth, mac, dns, …)
//
// A container sets one of the two network annotations, never both: the
// built-in path and the hook must not attach the same container twice.
//
// Files: request.go parses and checks the annotations, netns.go makes and
// removes the named network namespace, calls.go runs ADD/DEL/CHECK, and
// attach.go ties them to a container's state dir (its record, cni.json).
package cni

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// The annotations that ask for CNI networking.
const (
	AnnotationNetwork      = "io.husk.cni.network"
	AnnotationHookNetwork  = "io.husk.cni.hook.network"
	AnnotationIfName       = "io.husk.cni.ifname"
	AnnotationArgs         = "io.husk.cni.args"
	AnnotationCapabilities = "io.husk.cni.capabilities"

	DefaultIfName = "eth0"
)

// ConfigAnnotations are the annotations above, each of which changes what
// a container gets (`husk features` lists them).
func ConfigAnnotations() []string {
	return []string{AnnotationNetwork, AnnotationHookNetwork, AnnotationIfName, AnnotationArgs, AnnotationCapabilities}
}

// capabilityKeys are the runtimeConfig keys of the CNI conventions; a key
// outside them is most likely a typo, which libcni would drop silently.
var capabilityKeys = map[string]bool{
	"portMappings": true, "ipRanges": true, "bandwidth": true, "mac": true,
	"dns": true, "ips": true, "aliases": true, "infinibandGUID": true,
	"deviceID": true, "cgroupPath": true,
}

// Request is what a container asks of CNI.
type Request struct {
	Network      string         `json:"network"`
	IfName       string         `json:"ifname"`
	Args         [][2]string    `json:"args,omitempty"`
	Capabilities map[string]any `json:"capabilities,omitempty"`
}

// Parse reads a request from annotations, taking the network list's name
// from the annotation networkKey (AnnotationNetwork or
// AnnotationHookNetwork). No such annotation: nil, no networking. Every
// error names the annotation and its value.
func Parse(annotations map[string]string, networkKey string) (*Request, error) {
	network, ok := annotations[networkKey]
	if !ok {
		return nil, nil
	}
	if err := checkName("network name", network); err != nil {
		return nil, annotationError(networkKey, network, err.Error())
	}
	r := &Request{Network: network, IfName: DefaultIfName}
	if v, ok := annotations[AnnotationIfName]; ok {
		if err := checkIfName(v); err != nil {
			return nil, annotationError(AnnotationIfName, v, err.Error())
		}
		r.IfName = v
	}
	if v, ok := annotations[AnnotationArgs]; ok {
		args, err := parseArgs(v)
		if err != nil {
			return nil, annotationError(AnnotationArgs, v, err.Error())
		}
		r.Args = args
	}
	if v, ok := annotations[AnnotationCapabilities]; ok {
		caps, err := parseCapabilities(v)
		if err != nil {
			return nil, annotationError(AnnotationCapabilities, v, err.Error())
		}
		r.Capabilities = caps
	}
	return r, nil
}

func annotationError(key, value, why string) error {
	return fmt.Errorf("annotations[%q]: invalid %q: %s", key, value, why)
}

// parseArgs parses CNI_ARGS, "K=V;K2=V2", into pairs.
func parseArgs(s string) ([][2]string, error) {
	var out [][2]string
	for i, kv := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d %q is not KEY=VALUE (entries are separated by ';')", i+1, kv)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// parseCapabilities parses the runtimeConfig JSON object.
func parseCapabilities(s string) (map[string]any, error) {
	var caps map[string]any
	if err := json.Unmarshal([]byte(s), &caps); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if caps == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	var unknown []string
	for k := range caps {
		if !capabilityKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown capability %q (known: %s)", unknown[0], knownCapabilities())
	}
	return caps, nil
}

func knownCapabilities() string {
	keys := make([]string, 0, len(capabilityKeys))
	for k := range capabilityKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// ForConfig is the request of a container husk itself attaches (the
// built-in path), checked against its namespaces: husk attaches only a
// network namespace it makes, so the spec must ask for a new one with no
// path. nil: the container asks for no networking.
func ForConfig(c *configs.Config) (*Request, error) {
	r, err := Parse(c.Annotations, AnnotationNetwork)
	if err != nil || r == nil {
		return r, err
	}
	if _, ok := c.Annotations[AnnotationHookNetwork]; ok {
		return nil, fmt.Errorf("annotations[%q] and annotations[%q]: set one, not both (husk's built-in CNI or the cni-hook, not both on one container)",
			AnnotationNetwork, AnnotationHookNetwork)
	}
	ns, ok := c.Namespace(configs.NEWNET)
	if !ok {
		return nil, fmt.Errorf("annotations[%q]: CNI networking needs a new network namespace, but linux.namespaces has no \"network\" entry (the container would share the host's)",
			AnnotationNetwork)
	}
	if ns.Path != "" {
		return nil, fmt.Errorf("annotations[%q]: CNI networking needs a network namespace husk makes, but linux.namespaces \"network\" has path %q (drop the path or the annotation)",
			AnnotationNetwork, ns.Path)
	}
	return r, nil
}
