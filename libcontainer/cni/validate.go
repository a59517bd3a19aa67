package cni

import (
	"fmt"
	"strings"
	"unicode"
)

// The CNI spec's rules for the names husk passes to plugins, checked here
// so that a bad annotation fails create before anything is made (and
// without linking libcni into husk: plugins run in husk-cni).

// maxIfName is the kernel's limit on an interface name (IFNAMSIZ - 1).
const maxIfName = 15

// checkName checks a network name or container id: a letter or digit,
// then letters, digits, '_', '.' and '-'.
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	for i, r := range s {
		ok := r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if i > 0 && (r == '_' || r == '.' || r == '-') {
			ok = true
		}
		if !ok {
			return fmt.Errorf("invalid characters in %s (a letter or digit, then letters, digits, '_', '.', '-')", what)
		}
	}
	return nil
}

// checkIfName checks an interface name as the kernel and CNI take it.
func checkIfName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("interface name is empty")
	case len(s) > maxIfName:
		return fmt.Errorf("interface name is too long (at most %d characters)", maxIfName)
	case s == "." || s == "..":
		return fmt.Errorf("interface name is . or ..")
	case strings.ContainsFunc(s, func(r rune) bool { return r == '/' || r == ':' || unicode.IsSpace(r) }):
		return fmt.Errorf("interface name contains / or : or whitespace")
	}
	return nil
}
