// Package helper runs husk's helper binaries: programs installed beside
// husk (husk-cni, ...) that hold what only some containers need, so that
// the husk binary every start and exec runs stays small and initialises
// only what it uses. A helper is called as `husk-NAME OP`, reads one JSON
// document on stdin, writes one on stdout, and exits 0; on failure it
// writes its error as the last line of stderr and exits non-zero.
//
// A helper is looked for next to the running husk executable (make builds
// and installs them together), then in $PATH. HUSK_HELPER_DIR, when set,
// is looked in first (tests point it at a freshly built helper).
package helper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"
)

// EnvDir names a directory searched for helpers before any other.
const EnvDir = "HUSK_HELPER_DIR"

// Path finds the helper binary husk-<name>.
func Path(name string) (string, error) {
	bin := "husk-" + name
	var dirs []string
	if d := os.Getenv(EnvDir); d != "" {
		dirs = append(dirs, d)
	}
	if self, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(self))
	}
	for _, d := range dirs {
		p := filepath.Join(d, bin)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("helper %s: not next to husk (%s) nor in $PATH: install it with husk (make install)",
			bin, strings.Join(dirs, ", "))
	}
	return p, nil
}

// Run runs `husk-<name> op` with in as JSON on stdin, and decodes its
// stdout into out (if out is not nil). A failure is the helper's own last
// line of stderr; other stderr lines are logged as warnings.
func Run(ctx context.Context, name, op string, in, out any) error {
	path, err := Path(name)
	if err != nil {
		return err
	}
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("husk-%s %s: encode request: %w", name, op, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, op)
	cmd.Stdin = bytes.NewReader(data)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A helper dies with husk: after a kill -9 of husk mid-ADD, husk-cni
	// must not go on changing the network (or undo its ADD) while
	// `delete --force` cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := ""
	if len(lines) > 0 {
		last, lines = lines[len(lines)-1], lines[:len(lines)-1]
	}
	for _, l := range lines {
		if l != "" {
			logrus.Warnf("husk-%s: %s", name, l)
		}
	}
	if runErr != nil {
		var exit *exec.ExitError
		if errors.As(runErr, &exit) && last != "" {
			return errors.New(strings.TrimPrefix(last, "husk-"+name+": "))
		}
		if errors.Is(runErr, fs.ErrNotExist) {
			return fmt.Errorf("helper %s: %w", path, runErr)
		}
		return fmt.Errorf("husk-%s %s: %w", name, op, runErr)
	}
	if last != "" {
		logrus.Warnf("husk-%s: %s", name, last)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("husk-%s %s: decode its answer %q: %w", name, op, stdout.String(), err)
	}
	return nil
}

// Serve is the main of a helper: it reads the request on stdin, calls the
// handler for os.Args[1] and writes its answer on stdout. It exits.
func Serve(name string, handlers map[string]func(ctx context.Context, in []byte) (any, error)) {
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "husk-%s: %v\n", name, err)
		os.Exit(1)
	}
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: husk-%s OP <request.json (OP: %s); husk runs it", name, ops(handlers)))
	}
	h, ok := handlers[os.Args[1]]
	if !ok {
		fail(fmt.Errorf("unknown operation %q (%s)", os.Args[1], ops(handlers)))
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(fmt.Errorf("read the request on stdin: %w", err))
	}
	answer, err := h(context.Background(), in)
	if err != nil {
		fail(err)
	}
	data, err := json.Marshal(answer)
	if err != nil {
		fail(fmt.Errorf("encode the answer: %w", err))
	}
	if _, err := os.Stdout.Write(append(data, '\n')); err != nil {
		fail(fmt.Errorf("write the answer: %w", err))
	}
	os.Exit(0)
}

func ops(handlers map[string]func(context.Context, []byte) (any, error)) string {
	var names []string
	for k := range handlers {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
