package specconv

import (
	"errors"
	"reflect"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestConvertHooks(t *testing.T) {
	h := &specs.Hooks{
		Prestart:        []specs.Hook{{Path: "/bin/pre"}},
		CreateRuntime:   []specs.Hook{{Path: "/usr/bin/cni", Args: []string{"cni", "add"}, Env: []string{"A=1"}, Timeout: ptr(5)}},
		CreateContainer: []specs.Hook{{Path: "/bin/cc1"}, {Path: "/bin//cc2/"}},
		StartContainer:  []specs.Hook{{Path: "/bin/sc"}},
		Poststart:       []specs.Hook{{Path: "/bin/ps"}},
		Poststop:        []specs.Hook{{Path: "/bin/stop", Args: []string{"stop", "--now"}}},
	}
	got := convert(t, withSpec(func(s *specs.Spec) { s.Hooks = h })).Hooks
	want := configs.Hooks{
		configs.Prestart:        {{Path: "/bin/pre"}},
		configs.CreateRuntime:   {{Path: "/usr/bin/cni", Args: []string{"cni", "add"}, Env: []string{"A=1"}, Timeout: 5}},
		configs.CreateContainer: {{Path: "/bin/cc1"}, {Path: "/bin/cc2"}},
		configs.StartContainer:  {{Path: "/bin/sc"}},
		configs.Poststart:       {{Path: "/bin/ps"}},
		configs.Poststop:        {{Path: "/bin/stop", Args: []string{"stop", "--now"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hooks\n got: %s\nwant: %s", dump(got), dump(want))
	}
	h.CreateRuntime[0].Args[0] = "changed"
	if got[configs.CreateRuntime][0].Args[0] != "cni" {
		t.Error("the converted hooks share memory with the spec")
	}
}

func TestConvertHooksNone(t *testing.T) {
	for _, h := range []*specs.Hooks{nil, {}} {
		if got := convert(t, withSpec(func(s *specs.Spec) { s.Hooks = h })).Hooks; got != nil {
			t.Errorf("hooks %s gave %s", dump(h), dump(got))
		}
	}
}

func TestConvertHooksErrors(t *testing.T) {
	for _, tc := range []struct {
		want  string
		hooks specs.Hooks
	}{
		{`hooks.prestart[0].path: must not be empty`, specs.Hooks{Prestart: []specs.Hook{{}}}},
		{`hooks.createRuntime[1].path: must be absolute, got "hook.sh"`,
			specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/ok"}, {Path: "hook.sh"}}}},
		{`hooks.createContainer[0].env[0]: want NAME=VALUE, got "NOVALUE"`,
			specs.Hooks{CreateContainer: []specs.Hook{{Path: "/h", Env: []string{"NOVALUE"}}}}},
		{`hooks.startContainer[0].timeout: must be greater than zero, got 0`,
			specs.Hooks{StartContainer: []specs.Hook{{Path: "/h", Timeout: ptr(0)}}}},
		{`hooks.poststart[0].timeout: must be greater than zero, got -3`,
			specs.Hooks{Poststart: []specs.Hook{{Path: "/h", Timeout: ptr(-3)}}}},
		{`hooks.poststop[0].env[1]: want NAME=VALUE, got "=x"`,
			specs.Hooks{Poststop: []specs.Hook{{Path: "/h", Env: []string{"A=b", "=x"}}}}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			h := tc.hooks
			_, _, err := Convert(withSpec(func(s *specs.Spec) { s.Hooks = &h }), Options{Bundle: bundle})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n got: %v\nwant: %s", err, tc.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error %#v is not a FieldError", err)
			}
		})
	}
}

func TestConvertConsoleSize(t *testing.T) {
	box := &specs.Box{Height: 40, Width: 120}
	got := convert(t, withSpec(func(s *specs.Spec) { s.Process.Terminal, s.Process.ConsoleSize = true, box })).Process
	if !got.Terminal || got.ConsoleSize == nil || *got.ConsoleSize != (configs.ConsoleSize{Height: 40, Width: 120}) {
		t.Errorf("terminal %v, console size %s", got.Terminal, dump(got.ConsoleSize))
	}
	// Ignored without a terminal, as the spec says.
	got = convert(t, withSpec(func(s *specs.Spec) { s.Process.Terminal, s.Process.ConsoleSize = false, box })).Process
	if got.ConsoleSize != nil {
		t.Errorf("console size %s without a terminal", dump(got.ConsoleSize))
	}
	_, _, err := Convert(withSpec(func(s *specs.Spec) {
		s.Process.Terminal, s.Process.ConsoleSize = true, &specs.Box{Height: 70000, Width: 1}
	}), Options{Bundle: bundle})
	if want := "process.consoleSize: height and width must be at most 65535, got 70000x1"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
