package configs

import "testing"

func TestHooksRunInParent(t *testing.T) {
	h := Hook{Path: "/bin/true"}
	for _, c := range []struct {
		hooks Hooks
		want  bool
	}{
		{nil, false},
		{Hooks{CreateContainer: {h}, StartContainer: {h}, Poststart: {h}, Poststop: {h}}, false},
		{Hooks{Prestart: {h}}, true},
		{Hooks{CreateRuntime: {h}}, true},
		{Hooks{Prestart: {}, CreateRuntime: {}}, false},
	} {
		if got := c.hooks.RunInParent(); got != c.want {
			t.Errorf("%v.RunInParent() = %v, want %v", c.hooks, got, c.want)
		}
	}
}
