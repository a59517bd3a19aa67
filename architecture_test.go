package main

import (
	"os"
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
