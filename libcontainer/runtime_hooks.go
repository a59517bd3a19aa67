package libcontainer

import (
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/hooks"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
)

// The hooks husk runs in the runtime's namespaces, from the parent (init
// runs createContainer and startContainer itself: see initproc/hooks.go).
// prestart and createRuntime run on init's CREATE_HOOKS request (the
// protocol table in libcontainer/bootstrap), which init sends only when
// there are such hooks or a pids limit (createSteps, drivers.go); a
// failing hook makes the parent answer nothing: it kills init and undoes
// the create.

// hookState is the container's hook state (hooks only run for a state
// with a config: see hooks).
func (c *Container) hookState(status specs.ContainerState, pid int) specs.State {
	if c.State == nil || c.State.Config == nil {
		return specs.State{ID: c.ID, Status: status, Pid: pid}
	}
	return c.State.Config.SpecState(status, pid)
}

// hooks are the container's hooks of kind.
func (c *Container) hooks(kind configs.HookKind) []configs.Hook {
	if c.State == nil || c.State.Config == nil {
		return nil
	}
	return c.State.Config.Hooks[kind]
}

// runCreateRuntimeHooks runs prestart, then createRuntime, for init pid, while
// init waits before pivot_root. Any failure fails the create.
func (c *Container) runCreateRuntimeHooks(pid int) error {
	st := c.hookState(specs.StateCreating, pid)
	for _, kind := range []configs.HookKind{configs.Prestart, configs.CreateRuntime} {
		if err := hooks.Run(kind, c.hooks(kind), st, hooks.InheritEnv); err != nil {
			return err
		}
	}
	return nil
}

// runPoststart runs the poststart hooks once the process runs, stopping
// at the first that fails: its error fails the start, which stops the
// container (runtime-spec 1.3.0's lifecycle, as runc and crun).
func (c *Container) runPoststart() error {
	if len(c.hooks(configs.Poststart)) == 0 {
		return nil
	}
	st := c.hookState(specs.StateRunning, c.State.InitPid)
	return hooks.Run(configs.Poststart, c.hooks(configs.Poststart), st, hooks.InheritEnv)
}

// runPoststop runs the poststop hooks when the container is deleted. A
// failure is logged and ignored, as the runtime-spec says.
func (c *Container) runPoststop() {
	if len(c.hooks(configs.Poststop)) == 0 {
		return
	}
	st := c.hookState(specs.StateStopped, 0)
	for _, err := range hooks.RunAll(configs.Poststop, c.hooks(configs.Poststop), st, hooks.InheritEnv) {
		logrus.Warnf("container %s: %v", c.ID, err)
	}
}
