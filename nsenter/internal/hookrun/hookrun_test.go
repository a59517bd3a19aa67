package hookrun

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/hooks"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

var state = specs.State{Version: "1.2.0", ID: "c1", Status: specs.StateCreating, Pid: 1, Bundle: "/b"}

// both runs hs through libcontainer/hooks (Go) and hooks.c (C), each in
// dir, and returns their errors' texts ("" for none).
func both(t *testing.T, dir string, hs []configs.Hook) (goErr, cErr string) {
	t.Helper()
	env := hooks.EmptyEnv
	env.Dir = dir
	if err := hooks.Run(configs.CreateContainer, hs, state, env); err != nil {
		goErr = err.Error()
	}
	if err := Run(encode(t, dir, hs), false); err != nil {
		cErr = err.Error()
	}
	return goErr, cErr
}

func encode(t *testing.T, dir string, hs []configs.Hook) []byte {
	t.Helper()
	st, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	p := bootstrap.HookPlan{Kind: string(configs.CreateContainer), State: st, Dir: dir}
	for _, h := range hs {
		p.Hooks = append(p.Hooks, bootstrap.Hook{Path: h.Path, Args: h.Args, Env: h.Env, Timeout: h.Timeout})
	}
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSameErrorsAsGo(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("0123456789", 600)
	for _, tc := range []struct {
		name string
		hs   []configs.Hook
		ok   bool
	}{
		{"exit 0", []configs.Hook{{Path: script(t, dir, "ok", "cat >/dev/null")}}, true},
		{"exit 3 with output", []configs.Hook{{Path: script(t, dir, "three", "echo out; echo err >&2; exit 3")}}, false},
		{"output over 4 KiB: its tail", []configs.Hook{{Path: script(t, dir, "long", "echo "+long+"; echo end; exit 1")}}, false},
		{"white space only", []configs.Hook{{Path: script(t, dir, "ws", "printf '  \\n\\t'; exit 2")}}, false},
		{"a missing binary", []configs.Hook{{Path: filepath.Join(dir, "nope")}}, false},
		{"not executable", []configs.Hook{{Path: notExec}}, false},
		{"killed by TERM", []configs.Hook{{Path: script(t, dir, "term", "kill -TERM $$")}}, false},
		{"killed by KILL", []configs.Hook{{Path: script(t, dir, "kill", "kill -KILL $$")}}, false},
		{"timeout", []configs.Hook{{Path: script(t, dir, "sleep", "echo before; sleep 30"), Timeout: 1}}, false},
		{"timeout, a child holds the output", []configs.Hook{{Path: script(t, dir, "child", "sleep 30 & sleep 30"), Timeout: 1}}, false},
		{"never reads a 1 MiB state", []configs.Hook{{Path: script(t, dir, "noread", "exit 0")}}, true},
		{"the second of three fails, the third does not run", []configs.Hook{
			{Path: script(t, dir, "a", "exit 0")},
			{Path: script(t, dir, "b", "echo b; exit 5")},
			{Path: script(t, dir, "c", "touch "+filepath.Join(dir, "third-ran"))},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := state.Annotations
			if tc.name == "never reads a 1 MiB state" {
				state.Annotations = map[string]string{"big": strings.Repeat("x", 1<<20)}
			}
			defer func() { state.Annotations = old }()
			goErr, cErr := both(t, dir, tc.hs)
			if goErr != cErr {
				t.Errorf("errors differ:\n go %q\n  c %q", goErr, cErr)
			}
			if (cErr == "") != tc.ok {
				t.Errorf("error %q, want ok %v", cErr, tc.ok)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "third-ran")); err == nil {
		t.Error("a hook after a failed one ran")
	}
}

// What a hook gets: args, env (none when not given), the state on
// stdin, the directory, no fd but stdio: the same files from both.
func TestSameWorldAsGo(t *testing.T) {
	dir := t.TempDir()
	for _, side := range []string{"go", "c"} {
		out := filepath.Join(dir, side)
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		body := `cat >"$0.d/stdin"; echo "$@" >"$0.d/args"; env >"$0.d/env"; pwd >"$0.d/pwd"; ls /proc/self/fd >"$0.d/fds"`
		hs := []configs.Hook{
			{Path: script(t, out, "h1", body), Args: []string{"h1", "a b", "c"}},
			{Path: script(t, out, "h2", body), Env: []string{"A=1", "B=two"}},
		}
		for _, h := range hs {
			if err := os.Mkdir(h.Path+".d", 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if side == "go" {
			env := hooks.EmptyEnv
			env.Dir = dir
			err = hooks.Run(configs.CreateContainer, hs, state, env)
		} else {
			err = Run(encode(t, dir, hs), false)
		}
		if err != nil {
			t.Fatalf("%s: %v", side, err)
		}
	}
	for _, h := range []string{"h1.d", "h2.d"} {
		for _, f := range []string{"stdin", "args", "env", "pwd", "fds"} {
			g, _ := os.ReadFile(filepath.Join(dir, "go", h, f))
			c, _ := os.ReadFile(filepath.Join(dir, "c", h, f))
			// The shell's own variables name its script's path.
			norm := func(b []byte) string { return strings.ReplaceAll(string(b), "/go/", "/X/") }
			if norm(g) != strings.ReplaceAll(string(c), "/c/", "/X/") {
				t.Errorf("%s/%s differs:\n go %q\n  c %q", h, f, g, c)
			}
		}
	}
}

// A hostile or broken plan: each refused by the parser with a reason.
func TestParseRefusals(t *testing.T) {
	good := encode(t, "/", []configs.Hook{{Path: "/bin/true", Args: []string{"true"}, Env: []string{"A=1"}}})
	rec := func(typ, n uint32, payload []byte) []byte {
		b := binary.NativeEndian.AppendUint32(nil, typ)
		b = binary.NativeEndian.AppendUint32(b, n)
		b = append(b, payload...)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
		return b
	}
	head := func(timeout, hasEnv, argc, envc uint32) []byte {
		var b []byte
		for _, v := range []uint32{timeout, hasEnv, argc, envc} {
			b = binary.NativeEndian.AppendUint32(b, v)
		}
		return b
	}
	base := good[:0:0]
	base = append(base, rec(bootstrap.RecHooksKind, 4, []byte("cc\x00"))...)
	base = append(base, rec(bootstrap.RecHooksState, 2, []byte("{}"))...)
	base = append(base, rec(bootstrap.RecHooksDir, 2, []byte("/\x00"))...)
	hook := func(payload []byte) []byte {
		return append(append([]byte{}, base...), rec(bootstrap.RecHooksHook, uint32(len(payload)), payload)...)
	}
	for name, plan := range map[string][]byte{
		"truncated":            good[:len(good)-9],
		"a length that wraps":  append(append([]byte{}, base...), rec(bootstrap.RecHooksHook, 0xfffffff8, nil)...),
		"unknown record":       append(append([]byte{}, base...), rec(99, 0, nil)...),
		"no directory":         base[:len(base)-16],
		"a relative path":      hook(append(head(0, 0, 0, 0), "bin/true\x00"...)),
		"args past the end":    hook(append(head(0, 0, 3, 0), "/bin/true\x00a\x00"...)),
		"env without the flag": hook(append(head(0, 0, 0, 1), "/bin/true\x00A=1\x00"...)),
		"too many args":        hook(append(head(0, 0, bootstrap.HooksMaxArgs+1, 0), "/bin/true\x00"...)),
		"bytes after strings":  hook(append(head(0, 0, 0, 0), "/bin/true\x00junk"...)),
		"path without NUL":     hook(append(head(0, 0, 0, 0), "/bin/true"...)),
	} {
		if err := Run(plan, true); !errors.Is(err, ErrParse) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if err := Run(good, true); err != nil {
		t.Errorf("the good plan: %v", err)
	}
}

func TestEncodeRefusals(t *testing.T) {
	for _, tc := range []struct {
		plan bootstrap.HookPlan
		want string
	}{
		{bootstrap.HookPlan{Kind: "createContainer", Dir: "rel"}, `hooks.createContainer: the hooks' directory "rel" is not absolute`},
		{bootstrap.HookPlan{Kind: "createContainer", Dir: "/", Hooks: []bootstrap.Hook{{Path: "/x", Args: []string{"a\x00b"}}}},
			`hooks.createContainer[0].args[0] "a\x00b": contains a NUL byte`},
		{bootstrap.HookPlan{Kind: "createContainer", Dir: "/", Hooks: make([]bootstrap.Hook, bootstrap.HooksMaxCount+1)},
			"hooks.createContainer: 257 hooks, over the 256"},
		{bootstrap.HookPlan{Kind: "createContainer", Dir: "/", Hooks: []bootstrap.Hook{{Path: "/x", Timeout: -1}}},
			"hooks.createContainer[0].timeout -1: out of range"},
	} {
		if _, err := tc.plan.Encode(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func FuzzParseHooks(f *testing.F) {
	st, _ := json.Marshal(state)
	p := bootstrap.HookPlan{Kind: "createContainer", State: st, Dir: "/",
		Hooks: []bootstrap.Hook{{Path: "/bin/true", Args: []string{"true", "x"}, Env: []string{"A=1"}, Timeout: 3}}}
	b, _ := p.Encode()
	f.Add(b)
	f.Fuzz(func(t *testing.T, plan []byte) {
		_ = Run(plan, true) // must not crash, whatever it says
	})
}
