package specconv

// otherPlatforms warns about the sections of other platforms: husk runs
// Linux containers only.
func (c *converter) otherPlatforms() error {
	s := c.spec
	for _, other := range []struct {
		name string
		set  bool
	}{
		{"solaris", s.Solaris != nil}, {"windows", s.Windows != nil}, {"vm", s.VM != nil},
		{"zos", s.ZOS != nil}, {"freebsd", s.FreeBSD != nil},
	} {
		if other.set {
			c.warn(other.name, "ignored on Linux")
		}
	}
	return nil
}
