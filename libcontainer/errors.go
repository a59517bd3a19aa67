package libcontainer

import (
	"errors"
	"fmt"
)

// The words of these errors are part of husk's interface: containerd's
// shim maps kill and delete failures by substring ("does not exist",
// "container not running", "already exists"), as it does for runc.
var (
	ErrNotExist   = errors.New("does not exist")
	ErrExist      = errors.New("already exists")
	ErrNotRunning = errors.New("container not running")
	ErrNotPaused  = errors.New("container not paused")
)

// ErrInvalidConfig is in every refusal of a config (runc's key phrase,
// which scripts look for); ConfigError puts it in front.
var ErrInvalidConfig = errors.New("invalid configuration")

// ConfigError is err, a refusal of config.json (its text names the field
// and the value), as husk words it: "invalid configuration: config.json:
// linux.namespaces[2].type: unknown "netwrk"".
func ConfigError(err error) error {
	return fmt.Errorf("%w: config.json: %w", ErrInvalidConfig, err)
}

func notExist(id string) error { return fmt.Errorf("container %s %w", id, ErrNotExist) }
