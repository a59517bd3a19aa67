package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/architecture.md names the file of each step: every one must exist,
// so the page cannot drift from the tree unnoticed.
func TestArchitectureNamesFilesThatExist(t *testing.T) {
	data, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	// `path` where path has a directory or a source file's extension.
	code := regexp.MustCompile("`([^` ]+)`")
	file := regexp.MustCompile(`^[\w./-]+(/|\.go|\.c|\.h|\.md)$|^[\w-]+(/[\w.-]+)+$`)
	n := 0
	for _, m := range code.FindAllStringSubmatch(string(data), -1) {
		path := m[1]
		if !file.MatchString(path) || strings.HasPrefix(path, "ROOT/") {
			continue
		}
		n++
		if _, err := os.Stat(strings.TrimSuffix(path, "/")); err != nil {
			t.Errorf("docs/architecture.md names %s: %v", path, err)
		}
	}
	if n < 20 {
		t.Errorf("found only %d file names in docs/architecture.md: is the check still reading it?", n)
	}
}

// Files of other projects the tree's comments and docs name, with whose
// they are: TestNamedPathsExist does not look for them here.
var elsewhere = map[string]string{
	"fs/exec.c":                   "Linux",
	"debug.bats":                  "runc's tests/integration",
	"rootfs_linux.go":             "runc's libcontainer",
	"selinux.bats":                "runc's tests/integration",
	"INSTALL.md":                  "the release tarball (docs/install.md)",
	"consts.go":                   "cri-tools",
	"consts_linux.go":             "cri-tools",
	"security_context_linux.go":   "cri-tools",
	"cmd/kubelet":                 "Kubernetes",
	"cmd/kube-apiserver":          "Kubernetes",
	"cmd/critest":                 "cri-tools",
	"../shared/notes/vm-guest.md": "the development machine's notes",
	"runtime/proc.go":             "Go's runtime",
}

var (
	// A file: /-separated names ending in a source or doc extension.
	namedFile = regexp.MustCompile(`(?:^|[^\w./:$<~@-])((?:[\w.-]+/)*[A-Za-z0-9][\w-]*\.(?:go|c|h|md|bats|sh|bash))`)
	// Comments in Go and C; in shell and make files.
	cComment  = regexp.MustCompile(`//[^\n]*|/\*[\s\S]*?\*/`)
	shComment = regexp.MustCompile(`(?m)(?:^|\s)#[^\n]*`)
)

// TestNamedPathsExist: every file path a comment or a doc names exists.
// It reads the docs (*.md) whole, and the comments of the sources (*.go,
// *.c, *.h), the tests (*.bats, *.sh) and the Makefile. A file is named
// from the tree's root, from the naming file's directory, or from
// libcontainer/ (launch/plan.go); a bare name (launch.c) may be
// anywhere. A path from a top-level directory (libcontainer/trace/) must
// exist too. A renamed or moved file fails here until every mention
// follows it; another project's file goes in elsewhere.
func TestNamedPathsExist(t *testing.T) {
	top, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range top {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "vendor" {
			dirs = append(dirs, regexp.QuoteMeta(e.Name()))
		}
	}
	namedDir := regexp.MustCompile(`(?:^|[^\w./:$<~@-])((?:` + strings.Join(dirs, "|") + `)/[\w.-]+(?:/[\w.-]+)*)`)
	base := map[string]bool{}
	var texts []struct{ path, text string }
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		base[d.Name()] = true
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch ext := filepath.Ext(path); {
		case ext == ".md":
		case ext == ".go" || ext == ".c" || ext == ".h":
			data = []byte(strings.Join(cComment.FindAllString(string(data), -1), "\n"))
		case ext == ".bats" || ext == ".sh" || d.Name() == "Makefile":
			data = []byte(strings.Join(shComment.FindAllString(string(data), -1), "\n"))
		default:
			return nil
		}
		texts = append(texts, struct{ path, text string }{path, string(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	n := 0
	for _, f := range texts {
		for _, m := range namedFile.FindAllStringSubmatchIndex(f.text, -1) {
			p := f.text[m[2]:m[3]]
			if end := m[3]; end < len(f.text) && (f.text[end] == '/' || f.text[end] == '_' || isAlnum(f.text[end])) {
				continue // part of a longer name
			}
			n++
			if elsewhere[p] != "" || exists(filepath.Join(filepath.Dir(f.path), p)) || exists(p) ||
				exists(filepath.Join("libcontainer", p)) || (!strings.Contains(p, "/") && base[p]) {
				continue
			}
			t.Errorf("%s names %s, which does not exist", f.path, p)
		}
		for _, m := range namedDir.FindAllStringSubmatch(f.text, -1) {
			p := strings.TrimRight(m[1], ".")
			last := p[strings.LastIndex(p, "/")+1:]
			if elsewhere[p] != "" || strings.Contains(last, ".") || placeholder.MatchString(p) {
				continue // a file (checked above), a Go name (trace.Record), a placeholder (FILE)
			}
			n++
			if !exists(p) {
				t.Errorf("%s names %s, which does not exist", f.path, p)
			}
		}
	}
	t.Logf("%d paths named", n)
	if n < 500 {
		t.Errorf("found only %d paths named: is the check still reading the tree?", n)
	}
}

// placeholder: a path with a name in capitals stands for any (tests/integration/FILE).
var placeholder = regexp.MustCompile(`/[A-Z_]+(/|$)`)

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// The libcontainer root holds the Container API, the state store and the
// state machine, in at most ten files: a job of its own goes to a
// subpackage (docs/layout.md).
func TestLibcontainerRootSize(t *testing.T) {
	files, err := filepath.Glob("libcontainer/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			code = append(code, filepath.Base(f))
		}
	}
	if len(code) > 10 {
		t.Errorf("libcontainer/ has %d non-test Go files, over ten: %v", len(code), code)
	}
}
