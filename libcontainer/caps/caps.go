package caps

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/sirupsen/logrus"
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

// DropBounding removes from the calling thread's bounding set every
// capability the kernel knows that is not in keep. It needs CAP_SETPCAP, so
// call it before the uid changes. Names in keep the kernel lacks are ignored.
func DropBounding(keep []string) error {
	last, err := LastCap()
	if err != nil {
		return err
	}
	kept, err := mask(keep)
	if err != nil {
		return fmt.Errorf("bounding: %w", err)
	}
	for v := 0; v <= last; v++ {
		if kept&bit(v) != 0 {
			continue
		}
		in, err := prctlCapbsetRead(v)
		if err != nil {
			return fmt.Errorf("read %s from the bounding set: %w", name(v), err)
		}
		if !in {
			continue
		}
		if err := prctlCapbsetDrop(v); err != nil {
			return fmt.Errorf("drop %s from the bounding set: %w", name(v), err)
		}
	}
	return nil
}

// Apply sets the calling thread's effective, permitted and inheritable sets
// to c's, then makes its ambient set c's ambient list (those the kernel
// refuses are left out with a warning, as runc does). Call it after
// the uid changed (with PR_SET_KEEPCAPS set, or nothing is left to keep).
// The bounding set is DropBounding's job. A nil c drops every capability.
//
// Capabilities named in c that the running kernel lacks are left out and
// returned in skipped, once each, so the caller can warn about them.
func Apply(c *configs.Capabilities) (skipped []string, err error) {
	if c == nil {
		c = &configs.Capabilities{}
	}
	last, err := LastCap()
	if err != nil {
		return nil, err
	}
	p, skipped, err := makePlan(c, last)
	if err != nil {
		return skipped, err
	}
	if err := capset(p.effective, p.permitted, p.inheritable); err != nil {
		return skipped, fmt.Errorf("capset: %w", err)
	}
	if err := prctlCapAmbientClearAll(); err != nil {
		// Kernels before 4.3 have no ambient set: fine when none is asked for.
		if !errors.Is(err, unix.EINVAL) || len(p.ambient) > 0 {
			return skipped, fmt.Errorf("clear the ambient set: %w", err)
		}
	}
	raiseAmbient(p.ambient)
	return skipped, nil
}

// raiseAmbient raises each capability of list in the ambient set. As in
// runc, one the kernel refuses (not both permitted and inheritable, as in
// every bundle Debian's `runc spec` makes) is a warning, not an error: the
// process runs without it.
func raiseAmbient(list []int) {
	for _, v := range list {
		if err := prctlCapAmbientRaise(v); err != nil {
			logrus.Warnf("can't raise ambient capability %s (it must also be permitted and inheritable): %v", name(v), err)
		}
	}
}

// plan is what Apply asks of the kernel: three masks and the ambient list.
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
