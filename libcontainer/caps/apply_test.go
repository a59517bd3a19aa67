package caps

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// DropBounding and Apply change the credentials of the thread that calls
// them, so each case runs in a fresh copy of the test binary: TestMain sees
// helperEnv, runs the case on a locked thread, prints what the thread's
// /proc status says, and exits.
const helperEnv = "HUSK_CAPS_TEST_HELPER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name))
	}
	os.Exit(m.Run())
}

// helperResult is what a helper process reports.
type helperResult struct {
	Err     string            `json:"err,omitempty"`
	Skipped []string          `json:"skipped,omitempty"`
	Status  map[string]uint64 `json:"status"`        // CapInh, CapPrm, CapEff, CapBnd, CapAmb
	Log     string            `json:"log,omitempty"` // what the case logged
}

var (
	keep3   = []string{"CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"}
	mask3   = uint64(1<<unix.CAP_CHOWN | 1<<unix.CAP_KILL | 1<<unix.CAP_NET_BIND_SERVICE)
	nbsMask = uint64(1 << unix.CAP_NET_BIND_SERVICE)
)

// helperCases are the cases, run inside the helper process.
var helperCases = map[string]func() ([]string, error){
	"drop-bounding": func() ([]string, error) {
		return nil, DropBounding(keep3)
	},
	"apply-nil": func() ([]string, error) {
		return Apply(nil)
	},
	// The order husk init uses: bounding, keep caps across the uid change,
	// setuid, then the other sets.
	"apply-after-setuid": func() ([]string, error) {
		if err := DropBounding(append(keep3, "CAP_SETUID", "CAP_SETGID")); err != nil {
			return nil, err
		}
		if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0); err != nil {
			return nil, fmt.Errorf("PR_SET_KEEPCAPS: %w", err)
		}
		// This thread only: the raw call, not Go's all-threads Setresuid.
		if _, _, errno := unix.RawSyscall(unix.SYS_SETRESUID, 1000, 1000, 1000); errno != 0 {
			return nil, fmt.Errorf("setresuid: %w", errno)
		}
		return Apply(&configs.Capabilities{
			Bounding:    keep3,
			Effective:   []string{"CAP_CHOWN", "CAP_KILL"},
			Permitted:   keep3,
			Inheritable: []string{"CAP_NET_BIND_SERVICE"},
			Ambient:     []string{"CAP_NET_BIND_SERVICE"},
		})
	},
	"ambient-not-inheritable": func() ([]string, error) {
		return Apply(&configs.Capabilities{Permitted: keep3, Ambient: []string{"CAP_KILL"}})
	},
}

func runHelper(name string) int {
	runtime.LockOSThread()
	run, ok := helperCases[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "no helper case %q\n", name)
		return 2
	}
	var res helperResult
	var log bytes.Buffer
	logrus.SetOutput(&log)
	skipped, err := run()
	res.Log = log.String()
	res.Skipped = skipped
	if err != nil {
		res.Err = err.Error()
	}
	if res.Status, err = threadCaps(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// threadCaps reads the Cap* lines of the calling thread's status.
func threadCaps() (map[string]uint64, error) {
	f, err := os.Open("/proc/thread-self/status")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	caps := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(key, "Cap") {
			continue
		}
		if caps[key], err = strconv.ParseUint(strings.TrimSpace(val), 16, 64); err != nil {
			return nil, fmt.Errorf("status %s: %w", key, err)
		}
	}
	return caps, sc.Err()
}

// runCase runs one helper case in a new process and returns its report.
func runCase(t *testing.T, name string) helperResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper %s: %v", name, err)
	}
	var res helperResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("helper %s: %v in %q", name, err, out)
	}
	return res
}

// needCaps skips the test unless this process may change capabilities
// and uids.
func needCaps(t *testing.T) map[string]uint64 {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := threadCaps()
	if err != nil {
		t.Skipf("cannot read own capabilities: %v", err)
	}
	for _, c := range []int{unix.CAP_SETPCAP, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_CHOWN, unix.CAP_KILL, unix.CAP_NET_BIND_SERVICE} {
		if own["CapEff"]&bit(c) == 0 {
			t.Skipf("needs %s in the effective set (run as root)", name(c))
		}
	}
	return own
}

func TestDropBounding(t *testing.T) {
	own := needCaps(t)
	res := runCase(t, "drop-bounding")
	if res.Err != "" {
		t.Fatal(res.Err)
	}
	want := map[string]uint64{
		"CapBnd": mask3,
		// The other sets are not the bounding set's business.
		"CapEff": own["CapEff"], "CapPrm": own["CapPrm"], "CapInh": own["CapInh"], "CapAmb": own["CapAmb"],
	}
	checkStatus(t, res.Status, want)
}

func TestApplyNil(t *testing.T) {
	own := needCaps(t)
	res := runCase(t, "apply-nil")
	if res.Err != "" {
		t.Fatal(res.Err)
	}
	checkStatus(t, res.Status, map[string]uint64{
		"CapEff": 0, "CapPrm": 0, "CapInh": 0, "CapAmb": 0, "CapBnd": own["CapBnd"],
	})
}

func TestApplyAfterSetuid(t *testing.T) {
	needCaps(t)
	res := runCase(t, "apply-after-setuid")
	if res.Err != "" {
		t.Fatal(res.Err)
	}
	if res.Skipped != nil {
		t.Errorf("skipped %q, want none", res.Skipped)
	}
	checkStatus(t, res.Status, map[string]uint64{
		"CapBnd": mask3 | 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID,
		"CapEff": 1<<unix.CAP_CHOWN | 1<<unix.CAP_KILL,
		"CapPrm": mask3,
		"CapInh": nbsMask,
		"CapAmb": nbsMask,
	})
}

func TestApplyAmbientNotInheritable(t *testing.T) {
	needCaps(t)
	res := runCase(t, "ambient-not-inheritable")
	// As runc: a warning, and the process runs without it.
	if res.Err != "" {
		t.Errorf("error = %q, want none", res.Err)
	}
	if want := "can't raise ambient capability CAP_KILL"; !strings.Contains(res.Log, want) {
		t.Errorf("log = %q, want it to contain %q", res.Log, want)
	}
	if res.Status["CapAmb"] != 0 {
		t.Errorf("CapAmb = %#x, want 0", res.Status["CapAmb"])
	}
}

func checkStatus(t *testing.T, got, want map[string]uint64) {
	t.Helper()
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("%s missing from the status", key)
			continue
		}
		if g != w {
			t.Errorf("%s = %#x %v, want %#x %v", key, g, maskNames(g), w, maskNames(w))
		}
	}
}
