package bootstrap

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The contract lives here only: no other source file spells an fd
// variable's name (they use the constants, or bootstrap.h from C).
func TestNoOtherFileSpellsTheContract(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "tests" || name == "bench" || path == "." {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if (ext != ".go" && ext != ".c" && ext != ".h") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if filepath.Base(filepath.Dir(path)) == "bootstrap" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), `"_HUSK_`) {
			t.Errorf("%s spells one of init's fd variables: use the bootstrap constant", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
