package configs

import (
	"strings"
	"testing"
)

// A terminal without a mount namespace is the container's own process's
// (a pty of the host's, as runc); an exec'd process's is refused.
func TestValidateTerminalWithoutMountNamespace(t *testing.T) {
	c := &Config{Rootfs: t.TempDir(), Process: &Process{Args: []string{"sh"}, Terminal: true}}
	if err := Validate(c); err != nil {
		t.Errorf("terminal without a mount namespace: %v", err)
	}
	if err := CheckTerminal(c, c.Process); err == nil || !strings.Contains(err.Error(), "process.terminal") {
		t.Errorf("exec'd terminal without a mount namespace: %v", err)
	}
	c.Namespaces = []Namespace{{Type: NEWNS}}
	if err := CheckTerminal(c, c.Process); err != nil {
		t.Errorf("exec'd terminal with a mount namespace: %v", err)
	}
}
