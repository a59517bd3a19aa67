package configs

import "testing"

// A terminal without a mount namespace is allowed, as runc allows it:
// its pty is then one of the host's /dev/ptmx.
func TestValidateTerminalWithoutMountNamespace(t *testing.T) {
	c := &Config{Rootfs: t.TempDir(), Process: &Process{Args: []string{"sh"}, Terminal: true}}
	if err := Validate(c); err != nil {
		t.Errorf("terminal without a mount namespace: %v", err)
	}
}
