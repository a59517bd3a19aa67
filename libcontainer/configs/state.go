package configs

import specs "github.com/opencontainers/runtime-spec/specs-go"

// SpecState is the runtime-spec state of the container c describes, with
// status and pid: what hooks read on stdin and the seccomp listener gets.
// The parent and init both build it from here, so they cannot differ.
func (c *Config) SpecState(status specs.ContainerState, pid int) specs.State {
	return specs.State{
		Version:     c.OCIVersion,
		ID:          c.ID,
		Status:      status,
		Pid:         pid,
		Bundle:      c.Bundle,
		Annotations: c.Annotations,
	}
}
