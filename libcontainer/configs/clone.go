package configs

import "slices"

// Clone copies p deeply enough that the copy's slices and capability sets
// can change without touching p (the pointed-to settings such as the
// scheduler are shared: nothing changes them once converted).
func (p *Process) Clone() *Process {
	q := *p
	q.Args = slices.Clone(p.Args)
	q.Env = slices.Clone(p.Env)
	q.User.AdditionalGids = slices.Clone(p.User.AdditionalGids)
	q.Rlimits = slices.Clone(p.Rlimits)
	if c := p.Capabilities; c != nil {
		q.Capabilities = &Capabilities{
			Bounding:    slices.Clone(c.Bounding),
			Effective:   slices.Clone(c.Effective),
			Inheritable: slices.Clone(c.Inheritable),
			Permitted:   slices.Clone(c.Permitted),
			Ambient:     slices.Clone(c.Ambient),
		}
	}
	return &q
}
