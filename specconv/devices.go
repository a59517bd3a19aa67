package specconv

import (
	"path/filepath"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// defaultDevices are the nodes every container's /dev gets (OCI runtime
// spec, "Default Devices"); linux.devices may replace them.
func defaultDevices() []*configs.Device {
	dev := func(name string, major, minor int64) *configs.Device {
		return &configs.Device{Type: 'c', Path: "/dev/" + name, Major: major, Minor: minor, FileMode: 0o666}
	}
	return []*configs.Device{
		dev("null", 1, 3),
		dev("zero", 1, 5),
		dev("full", 1, 7),
		dev("random", 1, 8),
		dev("urandom", 1, 9),
		dev("tty", 5, 0),
	}
}

// devices sets the default devices, each replaced by a linux.devices entry
// of the same path, followed by the other linux.devices entries.
func (c *converter) devices() error {
	var fromSpec []*configs.Device
	byPath := map[string]bool{}
	for i, d := range c.linux().Devices {
		field := index("linux.devices", i)
		if !filepath.IsAbs(d.Path) {
			return fieldErrorf(field+".path", "must be absolute, got %q", d.Path)
		}
		path := filepath.Clean(d.Path)
		if byPath[path] {
			return fieldErrorf(field+".path", "duplicate %q", d.Path)
		}
		byPath[path] = true
		dev := &configs.Device{Path: path, FileMode: 0o666}
		switch d.Type {
		case "c", "u":
			dev.Type = 'c'
		case "b":
			dev.Type = 'b'
		case "p":
			dev.Type = 'p'
		default:
			return fieldErrorf(field+".type", `unknown %q, want "c", "b", "u" or "p"`, d.Type)
		}
		if dev.Type != 'p' {
			if d.Major < 0 || d.Minor < 0 {
				return fieldErrorf(field, "major and minor must not be negative, got %d:%d", d.Major, d.Minor)
			}
			dev.Major, dev.Minor = d.Major, d.Minor
		}
		if d.FileMode != nil {
			dev.FileMode = *d.FileMode & 0o777 // config.json may add the S_IFMT bits
		}
		if d.UID != nil {
			dev.UID = *d.UID
		}
		if d.GID != nil {
			dev.GID = *d.GID
		}
		fromSpec = append(fromSpec, dev)
	}
	for _, d := range defaultDevices() {
		if !byPath[d.Path] {
			c.cfg.Devices = append(c.cfg.Devices, d)
		}
	}
	c.cfg.Devices = append(c.cfg.Devices, fromSpec...)
	return nil
}
