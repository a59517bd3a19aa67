package initproc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
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

func TestProcessEnv(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"A=1", "B=2", "A=3"}, []string{"B=2", "A=3", "HOME=/"}},
		{[]string{"HOME=", "PATH=/bin"}, []string{"HOME=/", "PATH=/bin"}},
		{[]string{"HOME=/x", "HOME="}, []string{"HOME=/"}},
		{[]string{"HOME=", "HOME=/y"}, []string{"HOME=/y"}},
		{nil, []string{"HOME=/"}},
	} {
		// uid 4242 has no /etc/passwd entry here: its home is "/".
		got := processEnv(&configs.Process{Env: tc.in, User: configs.User{UID: 4242}})
		if !slices.Equal(got, tc.want) {
			t.Errorf("processEnv(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
