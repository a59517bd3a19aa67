package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSpecCoverageTestsExist keeps docs/spec-coverage.md true: every test
// it names exists, and every supported field names one.
func TestSpecCoverageTestsExist(t *testing.T) {
	f, err := os.Open("docs/spec-coverage.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), " | ")
		if len(cells) != 3 || !strings.HasPrefix(cells[0], "| `") {
			continue
		}
		rows++
		field, status, tests := cells[0], cells[1], strings.TrimSuffix(cells[2], " |")
		tests = strings.TrimSuffix(tests, "|")
		var refs []string
		for _, r := range strings.Split(tests, "<br>") {
			if r = strings.TrimSpace(r); r != "" {
				refs = append(refs, r)
			}
		}
		if strings.HasPrefix(status, "supported") && len(refs) == 0 {
			t.Errorf("%s: supported, but names no test", field)
		}
		for _, ref := range refs {
			if err := testExists(ref); err != "" {
				t.Errorf("%s: %s", field, err)
			}
		}
	}
	if rows < 50 {
		t.Errorf("read only %d rows: is the table format broken?", rows)
	}
}

// testExists checks one reference: bats:FILE:NAME or go:DIR:TestName.
func testExists(ref string) string {
	kind, rest, _ := strings.Cut(ref, ":")
	where, name, ok := strings.Cut(rest, ":")
	if !ok {
		return "bad test reference " + ref
	}
	switch kind {
	case "bats":
		b, err := os.ReadFile(filepath.Join("tests/integration", where))
		if err != nil {
			return err.Error()
		}
		if !strings.Contains(string(b), "\n@test \""+name+"\" {") {
			return "no bats test " + ref
		}
	case "go":
		files, _ := filepath.Glob(filepath.Join(where, "*_test.go"))
		re := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(name) + `\(t \*testing\.T\)`)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil && re.Match(b) {
				return ""
			}
		}
		return "no Go test " + ref
	default:
		return "bad test reference " + ref
	}
	return ""
}
