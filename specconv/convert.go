// Package specconv turns an OCI runtime spec (config.json) into husk's
// internal configs.Config. It is pure: no system calls, no files.
//
// Every error names the config.json field (as a JSON path) and the value:
//
//	linux.namespaces[2].type: unknown "netwrk"
//
// The caller adds the file name ("config.json: "). Fields husk cannot apply
// yet are refused with ErrNotSupported when ignoring them would weaken the
// container, and reported as warnings otherwise.
package specconv

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// Options are the command-line settings that shape the conversion.
type Options struct {
	// Bundle is the absolute path of the bundle directory; relative
	// root.path and bind mount sources are resolved against it.
	Bundle       string
	NoPivotRoot  bool
	NoNewKeyring bool
	// SystemdCgroup is --systemd-cgroup: linux.cgroupsPath is
	// "slice:prefix:name" and a systemd unit holds the container.
	SystemdCgroup bool
}

// converter carries one conversion: the input, the output, the warnings.
type converter struct {
	spec     *specs.Spec
	opts     Options
	cfg      *configs.Config
	warnings []string
}

// Convert checks s and makes the configs.Config husk init builds the
// container from. The warnings name fields that are accepted but not
// applied yet; the caller shows them to the user.
func Convert(s *specs.Spec, o Options) (*configs.Config, []string, error) {
	if s == nil {
		return nil, nil, fieldErrorf("config", "missing")
	}
	c := &converter{spec: s, opts: o, cfg: &configs.Config{
		OCIVersion:   s.Version,
		Hostname:     s.Hostname,
		Domainname:   s.Domainname,
		NoPivotRoot:  o.NoPivotRoot,
		NoNewKeyring: o.NoNewKeyring,
		Annotations:  maps.Clone(s.Annotations),
	}}
	// Namespaces come first: later steps check what needs which namespace.
	for _, step := range []func() error{
		c.ociVersion,
		c.otherPlatforms,
		c.namespaces,
		c.idMappings,
		c.root,
		c.process,
		c.terminal,
		c.mounts,
		c.devices,
		c.cgroups,
		c.paths,
		c.uts,
		c.sysctl,
		c.timeOffsets,
		c.seccomp,
		c.hooks,
		c.personality,
		c.memoryPolicy,
		c.netDevices,
		c.security,
	} {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	return c.cfg, c.warnings, nil
}

// warn records that field is accepted but not applied.
func (c *converter) warn(field, what string) {
	c.warnings = append(c.warnings, field+": "+what)
}

// linux is the spec's linux section; namespaces() guarantees it is set.
func (c *converter) linux() *specs.Linux { return c.spec.Linux }

// root sets the root filesystem.
func (c *converter) root() error {
	r := c.spec.Root
	if r == nil {
		return fieldErrorf("root", "missing")
	}
	if r.Path == "" {
		return fieldErrorf("root.path", "must not be empty")
	}
	path, err := c.inBundle("root.path", r.Path)
	if err != nil {
		return err
	}
	c.cfg.Rootfs = path
	c.cfg.Readonlyfs = r.Readonly
	return nil
}

// inBundle makes path (the value of field) absolute against the bundle.
func (c *converter) inBundle(field, path string) (string, error) {
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	if !filepath.IsAbs(c.opts.Bundle) {
		return "", fieldErrorf(field, "relative path %q needs an absolute bundle path, got %q", path, c.opts.Bundle)
	}
	return filepath.Join(c.opts.Bundle, path), nil
}

// paths sets maskedPaths and readonlyPaths.
func (c *converter) paths() error {
	for _, l := range []struct {
		field string
		paths []string
		dst   *[]string
	}{
		{"linux.maskedPaths", c.linux().MaskedPaths, &c.cfg.MaskPaths},
		{"linux.readonlyPaths", c.linux().ReadonlyPaths, &c.cfg.ReadonlyPaths},
	} {
		for i, p := range l.paths {
			if !filepath.IsAbs(p) {
				return fieldErrorf(index(l.field, i), "must be absolute, got %q", p)
			}
		}
		*l.dst = slices.Clone(l.paths)
	}
	return nil
}
