package caps

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// LastCap returns the highest capability number the running kernel knows,
// from /proc/sys/kernel/cap_last_cap, or by probing the bounding set when
// procfs cannot be read (a container without /proc). The kernel's answer
// does not change: it is read once per process (init asks twice).
var LastCap = sync.OnceValues(readLastCap)

func readLastCap() (int, error) {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return probeLastCap()
	}
	last, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || last < 0 {
		return 0, fmt.Errorf("/proc/sys/kernel/cap_last_cap: not a capability number: %q", data)
	}
	return last, nil
}

// probeLastCap finds the last capability by reading the bounding set, which
// fails with EINVAL for a number the kernel does not know.
func probeLastCap() (int, error) {
	last := -1
	for v := 0; v < 64; v++ {
		if _, err := prctlCapbsetRead(v); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break
			}
			return 0, fmt.Errorf("read %s from the bounding set: %w", name(v), err)
		}
		last = v
	}
	if last < 0 {
		return 0, errors.New("the kernel knows no capabilities")
	}
	return last, nil
}

// plan is what a process asks of the kernel: three masks and the ambient
// list.
type plan struct {
	effective, permitted, inheritable uint64
	ambient                           []int
}

// makePlan turns c into masks, leaving out (and listing in skipped) every
// capability above last, the kernel's last one.
func makePlan(c *configs.Capabilities, last int) (p plan, skipped []string, err error) {
	kernel := bit(last+1) - 1 // the capabilities 0..last
	var over, ambient uint64
	for _, s := range []struct {
		name string
		list []string
		dst  *uint64
	}{
		{"bounding", c.Bounding, new(uint64)},
		{"effective", c.Effective, &p.effective},
		{"permitted", c.Permitted, &p.permitted},
		{"inheritable", c.Inheritable, &p.inheritable},
		{"ambient", c.Ambient, &ambient},
	} {
		m, err := mask(s.list)
		if err != nil {
			return plan{}, nil, fmt.Errorf("%s: %w", s.name, err)
		}
		*s.dst = m & kernel
		over |= m &^ kernel
	}
	if extra := p.effective &^ p.permitted; extra != 0 {
		return plan{}, nil, fmt.Errorf("effective: %s not in the permitted set", strings.Join(maskNames(extra), ", "))
	}
	p.ambient = maskValues(ambient)
	return p, maskNames(over), nil
}

// mask is the bit mask of the named capabilities.
func mask(list []string) (uint64, error) {
	var m uint64
	for _, n := range list {
		v, ok := Value(n)
		if !ok {
			return 0, fmt.Errorf("unknown capability %q", n)
		}
		m |= bit(v)
	}
	return m, nil
}

func bit(v int) uint64 { return 1 << uint(v) }

// maskValues lists the capability numbers set in m, lowest first.
func maskValues(m uint64) []int {
	var vs []int
	for v := 0; v < 64; v++ {
		if m&bit(v) != 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

func maskNames(m uint64) []string {
	var ns []string
	for _, v := range maskValues(m) {
		ns = append(ns, name(v))
	}
	return ns
}
