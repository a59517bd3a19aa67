package specconv

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// The fuzz targets' invariants, for any input: no panic, no hang, and an
// error that says where the problem is (a JSON position or a field name).
// Seeds: testdata/fuzz/<target>/ (runc's, crun's and husk's own specs,
// broken ones), plus the f.Add calls. `make fuzz` runs each for a bounded
// time.

// fieldMsg is an error message that starts with a config.json field path,
// e.g. "linux.namespaces[2].type: ..." or "process.args: ...".
var fieldMsg = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.\[\]"/ ,-]*: `)

// namesWhere fails t unless err names a field or points into the input.
func namesWhere(t *testing.T, stage string, err error) {
	t.Helper()
	var pe *ParseError
	var fe *FieldError
	switch {
	case errors.As(err, &pe):
		if pe.Line < 1 || pe.Column < 1 {
			t.Errorf("%s: parse error without a position: %v", stage, err)
		}
	case errors.As(err, &fe):
		if fe.Field == "" {
			t.Errorf("%s: field error without a field: %v", stage, err)
		}
	case !fieldMsg.MatchString(err.Error()):
		t.Errorf("%s: error names no field: %q", stage, err)
	}
}

// bounded runs fn and fails t if it has not returned after a generous
// bound: the invariant is "no hang", not a speed.
func bounded(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("hang: no answer after 20s")
	}
}

func fuzzBundle(f *testing.F) string {
	dir := f.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		f.Fatal(err)
	}
	return dir
}

func FuzzConfig(f *testing.F) {
	bundle := fuzzBundle(f)
	f.Add([]byte(`{"ociVersion":"1.2.0","process":{"args":["sh"],"cwd":"/"},"root":{"path":"rootfs"},"linux":{"namespaces":[{"type":"mount"}]}}`))
	f.Add([]byte(`{"process":{"args":["sh"],"cwd":"/","user":{"uid":-1}},"root":{"path":"rootfs"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		bounded(t, func() {
			spec, err := Parse(data)
			if err != nil {
				namesWhere(t, "parse", err)
				return
			}
			cfg, _, err := Convert(spec, Options{Bundle: bundle})
			if err != nil {
				namesWhere(t, "convert", err)
				return
			}
			// Validate opens namespace paths: only the kernel's, never
			// a file the fuzzer names (a FIFO would block the open).
			for _, ns := range cfg.Namespaces {
				if ns.Path != "" && !strings.HasPrefix(ns.Path, "/proc/self/ns/") {
					return
				}
			}
			if err := configs.Validate(cfg); err != nil {
				namesWhere(t, "validate", err)
			}
		})
	})
}

func FuzzProcess(f *testing.F) {
	f.Add([]byte(`{"args":["sh"],"cwd":"/","env":["PATH=/bin"],"user":{"uid":0,"gid":0}}`))
	f.Add([]byte(`{"terminal":true,"args":["top"],"cwd":"/tmp","capabilities":{"bounding":["CAP_KILL"]},"rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		bounded(t, func() {
			p, err := ParseProcess(data)
			if err != nil {
				namesWhere(t, "parse", err)
				return
			}
			if _, _, err := ConvertProcess(p); err != nil {
				namesWhere(t, "convert", err)
			}
		})
	})
}
