package libcontainer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

// FuzzLoadState loads whatever bytes are in ROOT/ID/state.json, then asks
// for the container's status and its OCI state, as `husk state` does. The
// invariants: no panic, no hang, and a load error names the file.
// Seeds: testdata/fuzz/FuzzLoadState (a real state.json of a created
// container) and the f.Add calls.
func FuzzLoadState(f *testing.F) {
	good, err := json.Marshal(&State{
		OCIVersion: "1.2.0", ID: "c1", InitPid: 1, InitStart: 1, Bundle: "/b", Rootfs: "/b/rootfs",
		Created: time.Unix(0, 0), Owner: "root",
		Config:      &configs.Config{Rootfs: "/b/rootfs", Process: &configs.Process{Args: []string{"sh"}}},
		CgroupPaths: map[string]string{"freezer": "/nonexistent/husk-fuzz"},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"id":"c1","init_pid":-1,"config":null}`))
	f.Add([]byte(`{"init_pid":"x"}`))
	root := f.TempDir()
	dir := filepath.Join(root, "c1")
	if err := os.Mkdir(dir, 0o700); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, stateFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c, err := Load(root, "c1")
			if err != nil {
				if !strings.Contains(err.Error(), filepath.Join(dir, stateFile)) {
					t.Errorf("load error does not name the file: %v", err)
				}
				return
			}
			_ = c.OCIState()
			if _, err := json.Marshal(c.State); err != nil {
				t.Errorf("a loaded state does not encode again: %v", err)
			}
			full := c.State
			c.Close()
			// What a full load accepts, the partial one (start, state,
			// kill, delete) accepts too, and gets the same but the
			// skipped parts.
			p, err := LoadLifecycle(root, "c1")
			if err != nil {
				t.Errorf("full load ok, partial load: %v", err)
				return
			}
			p.Close() // unlocked: the exec load below locks it again
			want := partialOf(full, func(cfg *configs.Config) {
				cfg.Process, cfg.Mounts, cfg.Devices, cfg.Seccomp = nil, nil, nil, nil
			})
			if !reflect.DeepEqual(p.State, want) {
				t.Errorf("partial load\n%+v\nwant\n%+v", p.State, want)
			}
			_ = p.OCIState()
			// Likewise the exec load, without mounts, devices, hooks
			// and cgroup limits.
			e, err := LoadForExec(root, "c1")
			if err != nil {
				t.Errorf("full load ok, exec load: %v", err)
				return
			}
			e.Close()
			want = partialOf(full, func(cfg *configs.Config) {
				cfg.Mounts, cfg.Devices, cfg.Hooks = nil, nil, nil
			})
			if !reflect.DeepEqual(e.State, want) {
				t.Errorf("exec load\n%+v\nwant\n%+v", e.State, want)
			}
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("hang: no answer after 20s")
		}
	})
}

// partialOf is full as a partial load gives it: strip clears the parts
// of the config that load skips; the cgroup limits are always skipped.
func partialOf(full *State, strip func(*configs.Config)) *State {
	want := *full
	if full.Config != nil {
		cfg := *full.Config
		strip(&cfg)
		if cfg.Cgroup != nil {
			cg := *cfg.Cgroup
			cg.Resources = configs.Resources{}
			cfg.Cgroup = &cg
		}
		want.Config = &cfg
	}
	want.partial = true
	return &want
}
