package specconv

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// hooks checks the hooks section and copies it into the config.
func (c *converter) hooks() error {
	h := c.spec.Hooks
	if h == nil {
		return nil
	}
	lists := map[configs.HookKind][]specs.Hook{
		configs.Prestart:        h.Prestart, //nolint:staticcheck // deprecated, still honoured
		configs.CreateRuntime:   h.CreateRuntime,
		configs.CreateContainer: h.CreateContainer,
		configs.StartContainer:  h.StartContainer,
		configs.Poststart:       h.Poststart,
		configs.Poststop:        h.Poststop,
	}
	for _, kind := range configs.HookKinds() {
		for i, hook := range lists[kind] {
			out, err := convertHook(index("hooks."+string(kind), i), hook)
			if err != nil {
				return err
			}
			if c.cfg.Hooks == nil {
				c.cfg.Hooks = configs.Hooks{}
			}
			c.cfg.Hooks[kind] = append(c.cfg.Hooks[kind], out)
		}
	}
	return nil
}

// convertHook checks one hook: an absolute path, NAME=VALUE environment,
// a positive timeout.
func convertHook(field string, h specs.Hook) (configs.Hook, error) {
	if h.Path == "" {
		return configs.Hook{}, fieldErrorf(field+".path", "must not be empty")
	}
	if !filepath.IsAbs(h.Path) {
		return configs.Hook{}, fieldErrorf(field+".path", "must be absolute, got %q", h.Path)
	}
	for i, e := range h.Env {
		name, _, ok := strings.Cut(e, "=")
		if !ok || name == "" || strings.ContainsRune(e, 0) {
			return configs.Hook{}, fieldErrorf(index(field+".env", i), "want NAME=VALUE, got %q", e)
		}
	}
	out := configs.Hook{Path: filepath.Clean(h.Path), Args: slices.Clone(h.Args), Env: slices.Clone(h.Env)}
	if h.Timeout != nil {
		if *h.Timeout <= 0 {
			return configs.Hook{}, fieldErrorf(field+".timeout", "must be greater than zero, got %d", *h.Timeout)
		}
		out.Timeout = *h.Timeout
	}
	return out, nil
}
