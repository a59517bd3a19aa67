// Package steptable reads the launcher's step table, husk_steps in
// nsenter/launch.c, from its source, for the tests that check it: against
// docs/architecture.md and the order's rules (nsenter's steps_test.go),
// and against the table the fake ran (internal/stepfake).
package steptable

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Row is one row of husk_steps: {"name", applies, runs}; a NULL applies
// (the step always runs) reads "always".
type Row struct {
	Name, Applies, Runs string
}

var cRow = regexp.MustCompile(`^\s*\{"([a-z-]+)", (\w+), (\w+)\},`)

// Read reads husk_steps from the launch.c at path.
func Read(path string) ([]Row, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(src)
	i := strings.Index(text, "const struct husk_step husk_steps[] = {")
	if i < 0 {
		return nil, fmt.Errorf("%s: no husk_steps table", path)
	}
	var rows []Row
	for _, line := range strings.Split(text[i:], "\n")[1:] {
		if strings.HasPrefix(line, "};") {
			return rows, nil
		}
		m := cRow.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s: a husk_steps row this reader cannot read: %q", path, line)
		}
		if m[2] == "NULL" {
			m[2] = "always"
		}
		rows = append(rows, Row{m[1], m[2], m[3]})
	}
	return nil, fmt.Errorf("%s: husk_steps has no end", path)
}
