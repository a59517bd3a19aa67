package launch

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// containerHooks are the createContainer hooks pid 1 runs (nsenter/hooks.c)
// in the container's namespaces before pivot_root, in the rootfs's
// directory, each given the state with pid 1's pid as its own pid
// namespace sees it (runc's: the container's hooks see its init as pid 1
// of a new pid namespace). nil without hooks.
func containerHooks(cfg *configs.Config, pid int) ([]byte, error) {
	hs := cfg.Hooks[configs.CreateContainer]
	if len(hs) == 0 {
		return nil, nil
	}
	inner, err := nsPid(pid)
	if err != nil {
		return nil, fmt.Errorf("hooks.createContainer: the state's pid: %w", err)
	}
	state, err := json.Marshal(cfg.SpecState(specs.StateCreating, inner))
	if err != nil {
		return nil, fmt.Errorf("hooks.createContainer: encode the state: %w", err)
	}
	plan := bootstrap.HookPlan{Kind: string(configs.CreateContainer), State: state, Dir: cfg.Rootfs}
	for _, h := range hs {
		plan.Hooks = append(plan.Hooks, bootstrap.Hook{Path: h.Path, Args: h.Args, Env: h.Env, Timeout: h.Timeout})
	}
	return plan.Encode()
}

// nsPid is pid as its innermost pid namespace sees it: the last field of
// NSpid in /proc/PID/status.
func nsPid(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.Atoi(f[len(f)-1])
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no NSpid line", pid)
}
