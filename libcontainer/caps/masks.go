package caps

import "github.com/husk-runtime/husk/libcontainer/configs"

// Masks are c's sets as masks of the capabilities 0..last (the running
// kernel's LastCap), for the launcher's plan (libcontainer/launch): what
// stays in the bounding set, and the sets the process gets. Names above
// last are left out and listed in skipped. A nil c is every set empty.
type Masks struct {
	Bounding, Effective, Permitted, Inheritable, Ambient uint64
}

// MasksOf checks c and returns its masks.
func MasksOf(c *configs.Capabilities, last int) (m Masks, skipped []string, err error) {
	if c == nil {
		return Masks{}, nil, nil
	}
	p, skipped, err := makePlan(c, last)
	if err != nil {
		return Masks{}, nil, err
	}
	bounding, err := mask(c.Bounding)
	if err != nil {
		return Masks{}, nil, err
	}
	m = Masks{
		Bounding: bounding & (bit(last+1) - 1), Effective: p.effective,
		Permitted: p.permitted, Inheritable: p.inheritable,
	}
	for _, v := range p.ambient {
		m.Ambient |= bit(v)
	}
	return m, skipped, nil
}

// Name is the name of capability v ("CAP_CHOWN"), or its number.
func Name(v int) string { return name(v) }
