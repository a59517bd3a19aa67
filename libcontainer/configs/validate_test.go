package configs

import (
	"strings"
	"testing"
)

func TestValidateTerminalNeedsMountNamespace(t *testing.T) {
	c := &Config{Rootfs: t.TempDir(), Process: &Process{Args: []string{"sh"}, Terminal: true}}
	if err := Validate(c); err == nil || !strings.Contains(err.Error(), "process.terminal") {
		t.Errorf("terminal without a mount namespace: %v", err)
	}
	c.Namespaces = []Namespace{{Type: NEWNS}}
	if err := Validate(c); err != nil {
		t.Errorf("terminal with a mount namespace: %v", err)
	}
}
