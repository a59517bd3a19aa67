package configs

import (
	"slices"
	"strings"
)

// DedupEnv keeps the last NAME=VALUE of each name, in the place of that
// last one, as runc builds a process's environment.
func DedupEnv(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := make([]string, 0, len(in))
	for i := len(in) - 1; i >= 0; i-- {
		k, _, _ := strings.Cut(in[i], "=")
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, in[i])
	}
	slices.Reverse(out)
	return out
}
