package bootstrap

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The contract lives here only: no other source file spells the name of
// one of init's fd variables (they use the constants, or bootstrap.h
// from C).
func TestNoOtherFileSpellsTheContract(t *testing.T) {
	names := []string{EnvInitPipe, EnvLogPipe, EnvFifoFd, EnvConsoleFd, EnvListenerFd, EnvInitType, EnvTraceFd}
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
		for _, name := range names {
			if strings.Contains(string(data), `"`+name) {
				t.Errorf("%s spells %s: use the bootstrap constant", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
