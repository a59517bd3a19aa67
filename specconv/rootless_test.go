package specconv

import (
	"slices"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestToRootless(t *testing.T) {
	s := Example()
	ToRootless(s, 1234, 5678)

	var types []specs.LinuxNamespaceType
	for _, ns := range s.Linux.Namespaces {
		types = append(types, ns.Type)
	}
	want := []specs.LinuxNamespaceType{specs.PIDNamespace, specs.IPCNamespace, specs.UTSNamespace, specs.MountNamespace, specs.UserNamespace}
	if !slices.Equal(types, want) {
		t.Errorf("namespaces %v, want %v", types, want)
	}
	if m := s.Linux.UIDMappings; len(m) != 1 || m[0] != (specs.LinuxIDMapping{ContainerID: 0, HostID: 1234, Size: 1}) {
		t.Errorf("uidMappings %+v", m)
	}
	if m := s.Linux.GIDMappings; len(m) != 1 || m[0] != (specs.LinuxIDMapping{ContainerID: 0, HostID: 5678, Size: 1}) {
		t.Errorf("gidMappings %+v", m)
	}
	if s.Linux.Resources != nil {
		t.Errorf("resources kept: %+v", s.Linux.Resources)
	}
	for _, m := range s.Mounts {
		for _, o := range m.Options {
			if o[:min(len(o), 4)] == "gid=" || o[:min(len(o), 4)] == "uid=" {
				t.Errorf("mount %s keeps option %s", m.Destination, o)
			}
		}
		if m.Destination == "/sys" && (m.Type != "none" || m.Source != "/sys" || !slices.Contains(m.Options, "rbind") || !slices.Contains(m.Options, "ro")) {
			t.Errorf("/sys is not a read-only rbind of the host's: %+v", m)
		}
	}

	// The spec converts as it is.
	cfg, _, err := Convert(s, Options{Bundle: "/bundle"})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if !cfg.NewNamespace(configs.NEWUSER) {
		t.Errorf("no new user namespace in the converted config")
	}
	if _, ok := cfg.Namespace(configs.NEWNET); ok {
		t.Errorf("network namespace in the converted config")
	}
}

func TestToRootlessReplacesAUserNamespacePath(t *testing.T) {
	s := Example()
	s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace, Path: "/proc/1/ns/user"})
	ToRootless(s, 1000, 1000)
	n := 0
	for _, ns := range s.Linux.Namespaces {
		if ns.Type == specs.UserNamespace {
			n++
			if ns.Path != "" {
				t.Errorf("user namespace keeps path %q", ns.Path)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d user namespaces, want 1", n)
	}
}
