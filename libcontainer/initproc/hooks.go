package initproc

import (
	"fmt"
	"os"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/hooks"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// atMountHooks runs when the rootfs is mounted, before pivot_root: the
// parent runs prestart and createRuntime (in the runtime's namespaces),
// then init runs createContainer (in the container's, paths resolved in
// the runtime's mount tree, which init still sees).
func atMountHooks(sock *os.File, cfg *configs.Config, ask bool) error {
	// Asked (bootstrap.ConfigAskHooks) when the parent has hooks to run or
	// a pids limit to set: it applies the cgroup limits then, before init
	// sets anything that needs them (a SCHED_FIFO scheduler needs the
	// realtime budget of cpu.rt_runtime_us). Otherwise it applied them
	// before sending the config, and a round trip here would only wait.
	if ask {
		if err := bootstrap.Send(sock, bootstrap.SyncCreateHooks, nil); err != nil {
			return err
		}
		t, payload, err := bootstrap.Recv(sock)
		if err != nil {
			return fmt.Errorf("wait for the createRuntime hooks: %w", err)
		}
		if t != bootstrap.SyncCreateHooksDone {
			return fmt.Errorf("expected CREATE_HOOKS_DONE from the parent, got %s %q", t, payload)
		}
	}
	// Go init is pid 2: the container's init, pid 1 in its pid namespace
	// when it has its own, is its parent.
	st := cfg.SpecState(specs.StateCreating, os.Getppid())
	// As runc: they start in the container's rootfs.
	env := hooks.EmptyEnv
	env.Dir = cfg.Rootfs
	return hooks.Run(configs.CreateContainer, cfg.Hooks[configs.CreateContainer], st, env)
}
