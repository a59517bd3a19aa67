package helper

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHelper writes husk-NAME, a shell script, into a temporary dir that
// HUSK_HELPER_DIR points at.
func fakeHelper(t *testing.T, name, script string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "husk-"+name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, dir)
}

func TestRunAnswers(t *testing.T) {
	// The helper sees the operation as $1 and the request on stdin.
	fakeHelper(t, "echo", `read req; echo "warning one" >&2; printf '{"op":"%s","req":%s}\n' "$1" "$req"`)
	var out struct {
		Op  string         `json:"op"`
		Req map[string]int `json:"req"`
	}
	if err := Run(context.Background(), "echo", "add", map[string]int{"n": 7}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Op != "add" || out.Req["n"] != 7 {
		t.Errorf("answer %+v", out)
	}
}

func TestRunFailureIsLastStderrLine(t *testing.T) {
	fakeHelper(t, "fail", `echo "some detail" >&2; echo "husk-fail: CNI ADD of network \"n\": plugin exploded" >&2; exit 1`)
	err := Run(context.Background(), "fail", "add", struct{}{}, nil)
	if err == nil || err.Error() != `CNI ADD of network "n": plugin exploded` {
		t.Fatalf("error %v, want the helper's last line without its prefix", err)
	}
}

func TestRunBadAnswer(t *testing.T) {
	fakeHelper(t, "garble", `echo "not json"`)
	var out map[string]any
	err := Run(context.Background(), "garble", "check", struct{}{}, &out)
	if err == nil || !strings.Contains(err.Error(), "decode its answer") {
		t.Fatalf("error %v", err)
	}
}

func TestPathMissing(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err := Path("nonesuch")
	if err == nil || !strings.Contains(err.Error(), "husk-nonesuch") || !strings.Contains(err.Error(), "make install") {
		t.Fatalf("error %v, want one naming the helper and how to install it", err)
	}
}
