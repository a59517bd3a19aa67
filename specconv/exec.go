package specconv

import (
	"encoding/json"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// ParseProcess decodes a runtime-spec process object, as `husk exec
// --process` reads it (containerd's shim writes one per exec).
func ParseProcess(data []byte) (*specs.Process, error) {
	var p specs.Process
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, parseError(data, err)
	}
	return &p, nil
}

// ConvertProcess checks an exec'd process with the same rules as
// config.json's process; errors name the process.* field.
func ConvertProcess(p *specs.Process) (*configs.Process, []string, error) {
	c := &converter{spec: &specs.Spec{Process: p}, cfg: &configs.Config{}}
	for _, step := range []func() error{c.process, c.terminal, c.security} {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	return c.cfg.Process, c.warnings, nil
}
