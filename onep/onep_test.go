package onep

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrapMain links testdata/report as the Makefile links husk (with
// --wrap=main) and starts it without GOMAXPROCS and with it: the runtime
// starts on one P only when the caller did not choose, Go code never sees
// the variable onep added, and argv, the caller's environment and the
// auxiliary vector reach the runtime intact.
func TestWrapMain(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to link the test program with: ", err)
	}
	bin := filepath.Join(t.TempDir(), "report")
	build := exec.Command(gobin, "build", "-o", bin, "-ldflags", "-linkmode=external -extldflags '-no-pie -Wl,--wrap=main'", "./testdata/report")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"KEEP=me", "EMPTY="},
			`procs=1 added=true args=["an argument" ""] env=["KEEP=me" "EMPTY="] auxv=kernel's`},
		{[]string{"KEEP=me", "GOMAXPROCS=3"},
			`procs=3 added=false args=["an argument" ""] env=["KEEP=me" "GOMAXPROCS=3"] auxv=kernel's`},
		{[]string{}, `procs=1 added=true args=["an argument" ""] env=[] auxv=kernel's`},
	} {
		cmd := exec.Command(bin, "an argument", "")
		cmd.Env = tc.env // never nil, which would pass on the test's own
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("env %q: %v: %s", tc.env, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("env %q:\n got %s\nwant %s", tc.env, got, tc.want)
		}
	}
}
