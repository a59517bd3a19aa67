package initproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644)
	env := []string{"PATH=/nonexistent:" + dir}
	if got, err := lookPath("tool", env); err != nil || got != bin {
		t.Errorf("lookPath(tool) = %q, %v", got, err)
	}
	if _, err := lookPath("plain", env); err == nil || !strings.Contains(err.Error(), `exec: "plain": executable file not found in $PATH`) {
		t.Errorf("lookPath(plain) = %v", err)
	}
	if _, err := lookPath("/nonexistent/x", env); err == nil || !strings.Contains(err.Error(), `"/nonexistent/x"`) {
		t.Errorf("lookPath(abs missing) = %v", err)
	}
}
