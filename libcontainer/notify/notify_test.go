package notify

import (
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestIsReady(t *testing.T) {
	for msg, want := range map[string]bool{
		"READY=1":                   true,
		"STATUS=x\nREADY=1\n":       true,
		"READY=10":                  false,
		"XREADY=1":                  false,
		"MAINPID=1\nSTATUS=READY=1": false,
		"":                          false,
	} {
		if got := isReady([]byte(msg)); got != want {
			t.Errorf("isReady(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestAddToSpecReplacesTheSpecsNotifySocket(t *testing.T) {
	spec := &specs.Spec{Process: &specs.Process{Env: []string{"A=1", "NOTIFY_SOCKET=/own", "NOTIFY_SOCKETX=2"}}}
	AddToSpec(spec, "/run/husk/c1")
	if got := strings.Join(spec.Process.Env, " "); got != "A=1 NOTIFY_SOCKETX=2 NOTIFY_SOCKET=/run/notify/notify.sock" {
		t.Errorf("env: %s", got)
	}
	m := spec.Mounts[len(spec.Mounts)-1]
	if m.Destination != ContainerDir || m.Source != filepath.Join("/run/husk/c1", DirName) || m.Type != "bind" ||
		!strings.Contains(strings.Join(m.Options, ","), "ro") {
		t.Errorf("mount: %+v", m)
	}
}
