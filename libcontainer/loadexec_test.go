package libcontainer

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// exec's load keeps everything an exec reads (process, seccomp,
// namespaces, ids, attributes, the cgroup's names and cpuset CPUs) and
// skips the mounts, devices, hooks and other cgroup limits; its state is
// never saved.
func TestLoadForExec(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "c1")
	adj := 5
	errno := uint(1)
	cfg := &configs.Config{
		OCIVersion: "1.2.0", Rootfs: "/b/rootfs", ID: "c1", Bundle: "/b", TimensOffsets: "monotonic 1 0\n",
		Namespaces:  []configs.Namespace{{Type: configs.NEWPID}, {Type: configs.NEWUSER, Path: "/proc/1/ns/user"}},
		UIDMappings: []configs.IDMap{{ContainerID: 0, HostID: 1000, Size: 1}},
		Process: &configs.Process{Args: []string{"sh"}, OomScoreAdj: &adj,
			Capabilities: &configs.Capabilities{Bounding: []string{"CAP_KILL"}},
			Scheduler:    &configs.Scheduler{Policy: 1}},
		Mounts:  []*configs.Mount{{Destination: "/proc", Device: "proc"}},
		Devices: []*configs.Device{{Path: "/dev/null"}},
		Seccomp: &configs.Seccomp{DefaultAction: "SCMP_ACT_ERRNO", DefaultErrnoRet: &errno,
			Program: &configs.SeccompProgram{Filter: []byte{1, 2}}},
		Personality: &configs.Personality{Persona: 8},
		Hooks:       configs.Hooks{configs.Poststop: {{Path: "/bin/true"}}},
		Cgroup: &configs.Cgroup{Path: "/husk/c1", Systemd: true, ScopePrefix: "husk", Name: "c1",
			Resources: configs.Resources{CpuShares: 512, CpusetCpus: "0-1"}},
	}
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := saveState(dir, &State{ID: "c1", InitPid: 1, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	c, err := LoadForExec(root, "c1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := *cfg
	want.Mounts, want.Devices, want.Hooks = nil, nil, nil
	cg := *cfg.Cgroup
	cg.Resources = configs.Resources{CpusetCpus: "0-1"}
	want.Cgroup = &cg
	if !reflect.DeepEqual(c.State.Config, &want) {
		t.Errorf("exec's config\n%+v\nwant\n%+v", c.State.Config, &want)
	}
	if err := saveState(dir, c.State); err == nil {
		t.Error("an exec's partial state was saved")
	}
}
