package launch

import (
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

func TestBootstrapMessage(t *testing.T) {
	adj := -500
	cfg := &configs.Config{
		Namespaces: []configs.Namespace{
			{Type: configs.NEWNET, Path: "/var/run/netns/x"},
			{Type: configs.NEWNS},
			{Type: configs.NEWPID},
			{Type: configs.NEWUSER},
			{Type: configs.NEWIPC, Path: "/proc/1/ns/ipc"},
		},
		UIDMappings:   []configs.IDMap{{ContainerID: 0, HostID: 100000, Size: 65536}},
		GIDMappings:   []configs.IDMap{{ContainerID: 0, HostID: 200000, Size: 10}, {ContainerID: 10, HostID: 300000, Size: 1}},
		Process:       &configs.Process{OomScoreAdj: &adj},
		TimensOffsets: "monotonic 5 0\n",
	}
	m, err := BootstrapMessage(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := uint32(unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWUSER)
	if m.CloneFlags != want {
		t.Errorf("clone flags %#x, want %#x", m.CloneFlags, want)
	}
	// Join order follows NamespaceTypes: ipc before net.
	if got := strings.Join(m.NsPaths, ","); got != "ipc:/proc/1/ns/ipc,net:/var/run/netns/x" {
		t.Errorf("ns paths %q", got)
	}
	if m.UIDMap != "0 100000 65536\n" || m.GIDMap != "0 200000 10\n10 300000 1\n" {
		t.Errorf("maps %q %q", m.UIDMap, m.GIDMap)
	}
	if m.OomScoreAdj != "-500" || m.TimeOffsets != "monotonic 5 0\n" {
		t.Errorf("oom %q timens %q", m.OomScoreAdj, m.TimeOffsets)
	}
}
