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

func notExist(id string) error { return fmt.Errorf("container %s %w", id, ErrNotExist) }
