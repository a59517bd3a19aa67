package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/opencontainers/cgroups"
)

const (
	rtRuntimeFile = "cpu.rt_runtime_us"
	rtPeriodFile  = "cpu.rt_period_us"
)

// ensureRtBudget gives the ancestors of the container's v1 cpu cgroup
// (the path's, which by default are husk's own cgroup and its ancestors)
// the real-time budget that linux.resources.cpu.realtimeRuntime needs: a
// new cgroup has none, and the kernel refuses a child more than its parent
// has left. Each ancestor short of it gets what its children hold plus
// what this container needs, no more (the rest of the root's budget stays
// free for others), written top down. The hierarchy's root is never written.
// Without RT group scheduling (no cpu.rt_runtime_us) nothing is done:
// the write of the limit then says so.
func (m *Manager) ensureRtBudget(r *configs.Resources) error {
	if r == nil || r.CpuRtRuntime <= 0 {
		return nil
	}
	dir := m.v1Path("cpu")
	if dir == "" || !cgroups.PathExists(filepath.Join(dir, rtRuntimeFile)) {
		return nil
	}
	period := int64(r.CpuRtPeriod)
	if period == 0 {
		p, err := readRt(dir, rtPeriodFile)
		if err != nil {
			return err
		}
		period = p
	}
	// Bottom up: what each ancestor must hold (in its own period).
	type want struct {
		dir  string
		need int64
	}
	var chain []want
	child, runtime := dir, r.CpuRtRuntime
	for d := filepath.Dir(dir); cgroups.PathExists(filepath.Join(filepath.Dir(d), rtRuntimeFile)); d = filepath.Dir(d) {
		need, err := rtNeed(d, child, runtime, period)
		if err != nil {
			return fmt.Errorf("%scpu.realtimeRuntime: %d: cgroup %s: %w", res, r.CpuRtRuntime, d, err)
		}
		chain = append(chain, want{d, need})
		child, runtime = d, need
		if period, err = readRt(d, rtPeriodFile); err != nil {
			return err
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		w := chain[i]
		have, err := readRt(w.dir, rtRuntimeFile)
		if err == nil && have < w.need {
			err = cgroups.WriteFile(w.dir, rtRuntimeFile, strconv.FormatInt(w.need, 10))
		}
		if err != nil {
			return fmt.Errorf("%scpu.realtimeRuntime: %d: give the parent cgroup %s a real-time budget of %d: %w", res, r.CpuRtRuntime, w.dir, w.need, err)
		}
	}
	return nil
}

// rtNeed is the budget dir needs (in its own period) for its children
// but child to keep theirs and child to get runtime per period.
func rtNeed(dir, child string, runtime, period int64) (int64, error) {
	own, err := readRt(dir, rtPeriodFile)
	if err != nil {
		return 0, err
	}
	need := (runtime*own + period - 1) / period
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		if !e.IsDir() || sub == child {
			continue
		}
		rt, err := readRt(sub, rtRuntimeFile)
		if err != nil {
			continue // gone meanwhile
		}
		p, err := readRt(sub, rtPeriodFile)
		if err != nil || p == 0 {
			continue
		}
		need += (rt*own + p - 1) / p
	}
	return need, nil
}

func readRt(dir, file string) (int64, error) {
	s, err := cgroups.ReadFile(dir, file)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s/%s: %q: %w", dir, file, s, err)
	}
	return v, nil
}
