// criclient is a small CRI client for husk's client suites (tests/clients):
// it talks gRPC to containerd's CRI plugin with k8s.io/cri-api, the library
// kubelet uses, so the suites can drive the Kubernetes path without crictl.
//
//	criclient -a SOCK version
//	criclient -a SOCK runp   POD-FLAGS                    prints the pod sandbox id
//	criclient -a SOCK pstatus POD                         PodSandboxStatus (verbose) as JSON
//	criclient -a SOCK create POD-FLAGS --pod ID --image REF --log NAME -- ARGS...
//	                                                      prints the container id
//	criclient -a SOCK start ID
//	criclient -a SOCK status ID                           ContainerStatus (verbose) as JSON
//	criclient -a SOCK exec [--timeout S] ID -- ARGS...    ExecSync: stdout, stderr, exit code
//	criclient -a SOCK update [--memory BYTES] [--cpu-shares N] ID
//	                                                      UpdateContainerResources
//	criclient -a SOCK stop [--timeout S] ID
//	criclient -a SOCK rm ID
//	criclient -a SOCK stopp POD
//	criclient -a SOCK rmp POD
//
// POD-FLAGS (the same for runp and create, as kubelet sends the pod's config
// with CreateContainer too): --name N --uid U --namespace NS --log-dir D
// --cgroup-parent P [--selinux-level L] (the pod's seLinuxOptions level,
// which kubelet also gives each container); create also takes
// [--apparmor runtime/default|localhost/NAME|unconfined] [--cap-add CAP]
// [--mount HOST-PATH:CONTAINER-PATH] (a bind mount, not relabelled).
// A failed call prints the gRPC error on stderr and exits 1; exec exits with
// the command's exit code.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "criclient:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// run parses the global flags, connects and dispatches one command.
func run(args []string) (int, error) {
	global := flag.NewFlagSet("criclient", flag.ContinueOnError)
	addr := global.String("a", "/run/containerd/containerd.sock", "containerd's socket")
	timeout := global.Duration("t", 60*time.Second, "timeout of one call")
	if err := global.Parse(args); err != nil {
		return 0, err
	}
	if global.NArg() == 0 {
		return 0, fmt.Errorf("no command (version, runp, pstatus, create, start, status, exec, update, stop, rm, stopp, rmp)")
	}
	conn, err := grpc.NewClient("unix://"+*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", *addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c := &client{ctx: ctx, rt: runtimeapi.NewRuntimeServiceClient(conn)}
	cmd, rest := global.Arg(0), global.Args()[1:]
	switch cmd {
	case "version":
		return 0, c.version()
	case "runp":
		return 0, c.runPod(rest)
	case "pstatus":
		return 0, c.podStatus(rest)
	case "create":
		return 0, c.create(rest)
	case "start":
		return 0, c.start(rest)
	case "status":
		return 0, c.status(rest)
	case "exec":
		return c.exec(rest)
	case "update":
		return 0, c.update(rest)
	case "stop":
		return 0, c.stop(rest)
	case "rm":
		return 0, c.remove(rest)
	case "stopp":
		return 0, c.stopPod(rest)
	case "rmp":
		return 0, c.removePod(rest)
	}
	return 0, fmt.Errorf("unknown command %q", cmd)
}

type client struct {
	ctx context.Context
	rt  runtimeapi.RuntimeServiceClient
}

// podFlags are the pod sandbox's identity, shared by runp and create.
type podFlags struct {
	name, uid, namespace, logDir, cgroupParent, selinuxLevel string
}

func (p *podFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.name, "name", "husk-pod", "pod name")
	fs.StringVar(&p.uid, "uid", "husk-pod-uid", "pod uid")
	fs.StringVar(&p.namespace, "namespace", "default", "pod namespace")
	fs.StringVar(&p.logDir, "log-dir", "", "pod log directory (container logs go under it)")
	fs.StringVar(&p.cgroupParent, "cgroup-parent", "", "pod cgroup parent (cgroupfs path, as kubelet's cgroupfs driver sends)")
	fs.StringVar(&p.selinuxLevel, "selinux-level", "", "the pod's seLinuxOptions level (MCS), e.g. s0:c1,c2")
}

// selinux is the pod's seLinuxOptions as kubelet sends them (nil: none).
func (p *podFlags) selinux() *runtimeapi.SELinuxOption {
	if p.selinuxLevel == "" {
		return nil
	}
	return &runtimeapi.SELinuxOption{Level: p.selinuxLevel}
}

// config is the PodSandboxConfig kubelet would send for a pod with host
// networking off, a cgroupfs parent, a pod IPC namespace and a PID
// namespace per container.
func (p *podFlags) config() *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: p.name, Uid: p.uid, Namespace: p.namespace, Attempt: 0,
		},
		Hostname:     p.name,
		LogDirectory: p.logDir,
		Labels:       map[string]string{"husk-test": "1"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: p.cgroupParent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				SelinuxOptions: p.selinux(),
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: runtimeapi.NamespaceMode_POD,
					Pid:     runtimeapi.NamespaceMode_CONTAINER,
					Ipc:     runtimeapi.NamespaceMode_POD,
				},
			},
		},
	}
}

// oneID parses a command that takes flags and exactly one id.
func oneID(name string, args []string, fs *flag.FlagSet) (string, error) {
	if fs == nil {
		fs = flag.NewFlagSet(name, flag.ContinueOnError)
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", fmt.Errorf("%s: want exactly one id, got %q", name, fs.Args())
	}
	return fs.Arg(0), nil
}

func (c *client) version() error {
	v, err := c.rt.Version(c.ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return fmt.Errorf("Version: %w", err)
	}
	fmt.Printf("%s %s (CRI %s)\n", v.RuntimeName, v.RuntimeVersion, v.RuntimeApiVersion)
	return nil
}

func (c *client) runPod(args []string) error {
	var p podFlags
	fs := flag.NewFlagSet("runp", flag.ContinueOnError)
	p.register(fs)
	handler := fs.String("runtime-handler", "", "the RuntimeClass handler: a runtime's name in containerd's CRI config (empty: its default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	resp, err := c.rt.RunPodSandbox(c.ctx, &runtimeapi.RunPodSandboxRequest{Config: p.config(), RuntimeHandler: *handler})
	if err != nil {
		return fmt.Errorf("RunPodSandbox %s: %w", p.name, err)
	}
	fmt.Println(resp.PodSandboxId)
	return nil
}

// podStatus prints {"state", "ip", "info"} where info is containerd's
// verbose JSON (pid, runtimeSpec with the netns path, ...).
func (c *client) podStatus(args []string) error {
	id, err := oneID("pstatus", args, nil)
	if err != nil {
		return err
	}
	resp, err := c.rt.PodSandboxStatus(c.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: true})
	if err != nil {
		return fmt.Errorf("PodSandboxStatus %s: %w", id, err)
	}
	out := map[string]any{"state": resp.Status.State.String(), "info": verboseInfo(resp.Info)}
	if n := resp.Status.Network; n != nil {
		out["ip"] = n.Ip
	}
	return printJSON(out)
}

func (c *client) create(args []string) error {
	var p podFlags
	fs := flag.NewFlagSet("create", flag.ContinueOnError)
	p.register(fs)
	pod := fs.String("pod", "", "pod sandbox id")
	image := fs.String("image", "", "image reference")
	logPath := fs.String("log", "", "log path, relative to the pod's log dir")
	ctrName := fs.String("cname", "c", "container name")
	apparmor := fs.String("apparmor", "", "the container's AppArmor profile: runtime/default, localhost/NAME or unconfined")
	capAdd := fs.String("cap-add", "", "a capability to add, e.g. SYS_ADMIN")
	mount := fs.String("mount", "", "HOST-PATH:CONTAINER-PATH, a bind mount the runtime does not relabel")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pod == "" || *image == "" || fs.NArg() == 0 {
		return fmt.Errorf("create: need --pod, --image and a command after --")
	}
	req := &runtimeapi.CreateContainerRequest{
		PodSandboxId:  *pod,
		SandboxConfig: p.config(),
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: *ctrName},
			Image:    &runtimeapi.ImageSpec{Image: *image},
			Command:  fs.Args(),
			LogPath:  *logPath,
			Linux: &runtimeapi.LinuxContainerConfig{
				SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
					NamespaceOptions: &runtimeapi.NamespaceOption{
						Network: runtimeapi.NamespaceMode_POD,
						Pid:     runtimeapi.NamespaceMode_CONTAINER,
						Ipc:     runtimeapi.NamespaceMode_POD,
					},
					SelinuxOptions: p.selinux(),
				},
			},
		},
	}
	if *mount != "" {
		host, ctr, ok := strings.Cut(*mount, ":")
		if !ok || host == "" || ctr == "" {
			return fmt.Errorf("--mount %q: want HOST-PATH:CONTAINER-PATH", *mount)
		}
		req.Config.Mounts = []*runtimeapi.Mount{{HostPath: host, ContainerPath: ctr}}
	}
	sc := req.Config.Linux.SecurityContext
	if *capAdd != "" {
		sc.Capabilities = &runtimeapi.Capability{AddCapabilities: []string{*capAdd}}
	}
	if *apparmor != "" {
		prof, err := apparmorProfile(*apparmor)
		if err != nil {
			return err
		}
		sc.Apparmor, sc.ApparmorProfile = prof, *apparmor
	}
	resp, err := c.rt.CreateContainer(c.ctx, req)
	if err != nil {
		return fmt.Errorf("CreateContainer in %s: %w", *pod, err)
	}
	fmt.Println(resp.ContainerId)
	return nil
}

// apparmorProfile is the CRI's AppArmor field for the flag's value; kubelet
// sends it and the older string field (the one containerd 1.6 reads) both.
func apparmorProfile(v string) (*runtimeapi.SecurityProfile, error) {
	switch {
	case v == "runtime/default":
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case v == "unconfined":
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	case strings.HasPrefix(v, "localhost/") && len(v) > len("localhost/"):
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost,
			LocalhostRef: strings.TrimPrefix(v, "localhost/")}, nil
	}
	return nil, fmt.Errorf("--apparmor %q: want runtime/default, localhost/NAME or unconfined", v)
}

func (c *client) start(args []string) error {
	id, err := oneID("start", args, nil)
	if err != nil {
		return err
	}
	if _, err := c.rt.StartContainer(c.ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		return fmt.Errorf("StartContainer %s: %w", id, err)
	}
	return nil
}

// status prints {"state", "exitCode", "reason", "logPath", "info"}, info
// being containerd's verbose JSON (pid, runtimeSpec, ...).
func (c *client) status(args []string) error {
	id, err := oneID("status", args, nil)
	if err != nil {
		return err
	}
	resp, err := c.rt.ContainerStatus(c.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		return fmt.Errorf("ContainerStatus %s: %w", id, err)
	}
	s := resp.Status
	return printJSON(map[string]any{
		"state":    s.State.String(),
		"exitCode": s.ExitCode,
		"reason":   s.Reason,
		"message":  s.Message,
		"logPath":  s.LogPath,
		"image":    s.Image.GetImage(),
		"info":     verboseInfo(resp.Info),
	})
}

// exec runs ExecSync and mirrors the command's stdout, stderr and exit code.
func (c *client) exec(args []string) (int, error) {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	timeout := fs.Int64("timeout", 30, "ExecSync timeout in seconds")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if fs.NArg() < 2 {
		return 0, fmt.Errorf("exec: want ID -- ARGS...")
	}
	id := fs.Arg(0)
	resp, err := c.rt.ExecSync(c.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: fs.Args()[1:], Timeout: *timeout})
	if err != nil {
		return 0, fmt.Errorf("ExecSync %s %q: %w", id, fs.Args()[1:], err)
	}
	os.Stdout.Write(resp.Stdout)
	os.Stderr.Write(resp.Stderr)
	return int(resp.ExitCode), nil
}

// update sends UpdateContainerResources with the given cgroupfs limits.
func (c *client) update(args []string) error {
	fs := flag.NewFlagSet("update", flag.ContinueOnError)
	memory := fs.Int64("memory", 0, "memory limit in bytes")
	shares := fs.Int64("cpu-shares", 0, "CPU shares")
	id, err := oneID("update", args, fs)
	if err != nil {
		return err
	}
	req := &runtimeapi.UpdateContainerResourcesRequest{
		ContainerId: id,
		Linux:       &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: *memory, CpuShares: *shares},
	}
	if _, err := c.rt.UpdateContainerResources(c.ctx, req); err != nil {
		return fmt.Errorf("UpdateContainerResources %s: %w", id, err)
	}
	return nil
}

func (c *client) stop(args []string) error {
	fs := flag.NewFlagSet("stop", flag.ContinueOnError)
	timeout := fs.Int64("timeout", 10, "seconds between SIGTERM and SIGKILL")
	id, err := oneID("stop", args, fs)
	if err != nil {
		return err
	}
	if _, err := c.rt.StopContainer(c.ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: *timeout}); err != nil {
		return fmt.Errorf("StopContainer %s: %w", id, err)
	}
	return nil
}

func (c *client) remove(args []string) error {
	id, err := oneID("rm", args, nil)
	if err != nil {
		return err
	}
	if _, err := c.rt.RemoveContainer(c.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		return fmt.Errorf("RemoveContainer %s: %w", id, err)
	}
	return nil
}

func (c *client) stopPod(args []string) error {
	id, err := oneID("stopp", args, nil)
	if err != nil {
		return err
	}
	if _, err := c.rt.StopPodSandbox(c.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
		return fmt.Errorf("StopPodSandbox %s: %w", id, err)
	}
	return nil
}

func (c *client) removePod(args []string) error {
	id, err := oneID("rmp", args, nil)
	if err != nil {
		return err
	}
	if _, err := c.rt.RemovePodSandbox(c.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
		return fmt.Errorf("RemovePodSandbox %s: %w", id, err)
	}
	return nil
}

// verboseInfo decodes containerd's verbose "info" value (a JSON document
// in a string); anything undecodable is kept as the raw string.
func verboseInfo(info map[string]string) any {
	raw, ok := info["info"]
	if !ok {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return raw
	}
	return v
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	return nil
}
