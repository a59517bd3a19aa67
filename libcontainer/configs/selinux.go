package configs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/opencontainers/selinux/go-selinux"
)

// The SELinux probes, variables so that tests can fake a host with SELinux.
var (
	// SELinuxEnabled reports whether SELinux is on (selinuxfs mounted and
	// this process labelled), as runc asks it.
	SELinuxEnabled = selinux.GetEnabled
	// selinuxCheckContext asks the kernel whether the loaded policy knows
	// a context (a write to selinuxfs's context file).
	selinuxCheckContext = selinux.SecurityCheckContext
)

// selinuxDisabled is runc's wording for a label on a host without SELinux.
const selinuxDisabled = "selinux label is specified in config, but selinux is disabled or not supported"

// maxCategory bounds the MCS category numbers a level may name. The
// library's range parser expands "c0.cN" into a bitset of N bits, so a
// hostile "c0.c2147483647" would cost the parent 256 MiB; policies define
// 1024 categories (Debian's and Fedora's reference policies).
const maxCategory = 65535

// checkSELinuxLabel refuses a label that is not "user:role:type[:level]"
// with a well-formed MLS/MCS level, then one on a host without SELinux,
// then one the loaded policy does not know; each naming field and value.
func checkSELinuxLabel(field, label string) error {
	if label == "" {
		return nil
	}
	if err := selinuxLabelSyntax(label); err != nil {
		return fmt.Errorf("%s: %q: malformed SELinux label: %w", field, label, err)
	}
	if !SELinuxEnabled() {
		return fmt.Errorf("%s: %q: %s", field, label, selinuxDisabled)
	}
	if err := selinuxCheckContext(label); err != nil {
		return fmt.Errorf("%s: %q: not a valid context in the loaded SELinux policy: %w", field, label, err)
	}
	return nil
}

// selinuxLabelSyntax parses label with the SELinux library: its four
// fields, and the level as an MLS range ("s0", "s0:c1,c2", "s0-s0:c0.c1023").
func selinuxLabelSyntax(label string) error {
	// A quote would end context="..." in a mount's data early.
	if strings.ContainsAny(label, " \t\n\x00\"") {
		return errors.New("it contains white space, a quote or a NUL byte")
	}
	c, err := selinux.NewContext(label)
	if err != nil {
		return fmt.Errorf("want user:role:type[:level]: %w", err)
	}
	for _, k := range []string{"user", "role", "type"} {
		if c[k] == "" {
			return fmt.Errorf("empty %s", k)
		}
	}
	level, ok := c["level"]
	if !ok {
		return nil
	}
	if err := categoriesBounded(level); err != nil {
		return fmt.Errorf("level %q: %w", level, err)
	}
	// The library checks a range while computing the bounds of two.
	if _, err := selinux.CalculateGlbLub(level, level); err != nil {
		return fmt.Errorf("level %q: %w", level, err)
	}
	return nil
}

// categoriesBounded refuses a category number above maxCategory before
// the library expands a range of them.
func categoriesBounded(level string) error {
	for _, f := range strings.FieldsFunc(level, func(r rune) bool { return strings.ContainsRune(":,.-", r) }) {
		if len(f) < 2 || f[0] != 'c' {
			continue
		}
		if n, err := strconv.ParseUint(f[1:], 10, 64); err == nil && n > maxCategory {
			return fmt.Errorf("category %s beyond c%d", f, maxCategory)
		}
	}
	return nil
}
