package cni

import (
	"reflect"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		ann  map[string]string
		want *Request
		err  string // substring of the error; "" = no error
	}{
		{name: "no annotation", ann: map[string]string{AnnotationIfName: "net1"}, want: nil},
		{
			name: "defaults",
			ann:  map[string]string{AnnotationNetwork: "mynet"},
			want: &Request{Network: "mynet", IfName: "eth0"},
		},
		{
			name: "everything",
			ann: map[string]string{
				AnnotationNetwork:      "my-net.1",
				AnnotationIfName:       "net1",
				AnnotationArgs:         "IgnoreUnknown=1;K8S_POD_NAME=a=b;EMPTY=",
				AnnotationCapabilities: `{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}],"mac":"c2:11:22:33:44:55"}`,
			},
			want: &Request{
				Network: "my-net.1", IfName: "net1",
				Args: [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAME", "a=b"}, {"EMPTY", ""}},
				Capabilities: map[string]any{
					"portMappings": []any{map[string]any{"hostPort": 8080.0, "containerPort": 80.0, "protocol": "tcp"}},
					"mac":          "c2:11:22:33:44:55",
				},
			},
		},
		{name: "empty network", ann: map[string]string{AnnotationNetwork: ""}, err: `annotations["io.husk.cni.network"]: invalid ""`},
		{name: "bad network name", ann: map[string]string{AnnotationNetwork: "my net"}, err: `annotations["io.husk.cni.network"]: invalid "my net"`},
		{name: "ifname with slash", ann: map[string]string{AnnotationNetwork: "n", AnnotationIfName: "a/b"}, err: `annotations["io.husk.cni.ifname"]: invalid "a/b"`},
		{name: "ifname too long", ann: map[string]string{AnnotationNetwork: "n", AnnotationIfName: "abcdefghijklmnop"}, err: `annotations["io.husk.cni.ifname"]`},
		{name: "empty ifname", ann: map[string]string{AnnotationNetwork: "n", AnnotationIfName: ""}, err: `annotations["io.husk.cni.ifname"]`},
		{name: "arg without =", ann: map[string]string{AnnotationNetwork: "n", AnnotationArgs: "A=1;B"}, err: `annotations["io.husk.cni.args"]: invalid "A=1;B": entry 2 "B" is not KEY=VALUE`},
		{name: "arg empty key", ann: map[string]string{AnnotationNetwork: "n", AnnotationArgs: "=1"}, err: `entry 1 "=1" is not KEY=VALUE`},
		{name: "trailing ;", ann: map[string]string{AnnotationNetwork: "n", AnnotationArgs: "A=1;"}, err: `entry 2 "" is not KEY=VALUE`},
		{name: "caps not JSON", ann: map[string]string{AnnotationNetwork: "n", AnnotationCapabilities: "{"}, err: `annotations["io.husk.cni.capabilities"]: invalid "{": not a JSON object`},
		{name: "caps an array", ann: map[string]string{AnnotationNetwork: "n", AnnotationCapabilities: "[]"}, err: `not a JSON object`},
		{name: "caps null", ann: map[string]string{AnnotationNetwork: "n", AnnotationCapabilities: "null"}, err: `not a JSON object`},
		{name: "caps typo", ann: map[string]string{AnnotationNetwork: "n", AnnotationCapabilities: `{"portMapping":[]}`}, err: `unknown capability "portMapping"`},
		{
			name: "hook key",
			ann:  map[string]string{AnnotationHookNetwork: "hooknet"},
			want: nil, // Parse with AnnotationNetwork ignores the hook's key
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.ann, AnnotationNetwork)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestParseHookKey(t *testing.T) {
	r, err := Parse(map[string]string{AnnotationHookNetwork: "hooknet", AnnotationIfName: "net0"}, AnnotationHookNetwork)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil || r.Network != "hooknet" || r.IfName != "net0" {
		t.Fatalf("got %#v", r)
	}
}

func TestForConfig(t *testing.T) {
	withNet := func(ns ...configs.Namespace) *configs.Config {
		return &configs.Config{
			Annotations: map[string]string{AnnotationNetwork: "n"},
			Namespaces:  append([]configs.Namespace{{Type: configs.NEWNS}}, ns...),
		}
	}
	tests := []struct {
		name string
		cfg  *configs.Config
		want bool
		err  string
	}{
		{name: "not asked", cfg: &configs.Config{Namespaces: []configs.Namespace{{Type: configs.NEWNET}}}},
		{name: "new netns", cfg: withNet(configs.Namespace{Type: configs.NEWNET}), want: true},
		{name: "host netns", cfg: withNet(), err: `annotations["io.husk.cni.network"]: CNI networking needs a new network namespace, but linux.namespaces has no "network" entry`},
		{name: "netns path", cfg: withNet(configs.Namespace{Type: configs.NEWNET, Path: "/var/run/netns/x"}), err: `linux.namespaces "network" has path "/var/run/netns/x"`},
		{
			name: "both keys",
			cfg: &configs.Config{
				Annotations: map[string]string{AnnotationNetwork: "n", AnnotationHookNetwork: "n"},
				Namespaces:  []configs.Namespace{{Type: configs.NEWNET}},
			},
			err: `annotations["io.husk.cni.network"] and annotations["io.husk.cni.hook.network"]: set one, not both`,
		},
		{
			name: "bad annotation before namespaces",
			cfg: &configs.Config{
				Annotations: map[string]string{AnnotationNetwork: "n", AnnotationIfName: "a b"},
			},
			err: `annotations["io.husk.cni.ifname"]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ForConfig(tc.cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got != nil) != tc.want {
				t.Fatalf("got %#v, want a request: %v", got, tc.want)
			}
		})
	}
}

func TestNetnsPath(t *testing.T) {
	if got := NetnsPath("abc"); got != "/var/run/netns/husk-abc" {
		t.Fatalf("NetnsPath = %q", got)
	}
}
