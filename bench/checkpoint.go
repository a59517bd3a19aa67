package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The checkpoint and restore rows: a sleeping container (stdio
// /dev/null, so CRIU can dump it) checkpointed, then restored detached,
// by husk and by runc in turn; crun is left out (Debian's is built
// without CRIU). Skipped, with CRIU's reason, where `criu check` fails.
const (
	rowCheckpoint = "checkpoint"
	rowRestore    = "restore -d"
)

func (b *bench) checkpoints() error {
	if b.o.criuN <= 0 {
		return nil
	}
	if out, err := exec.Command("criu", "check").CombinedOutput(); err != nil {
		fmt.Printf("note: checkpoint/restore rows skipped: criu check: %v: %s\n", err, lastLine(out))
		return nil
	}
	sleeper := filepath.Join(b.work, "bundle-ck")
	if err := sleepBundle(b.bundle, sleeper); err != nil {
		return err
	}
	var rs []*runtime
	for _, r := range b.runtimes {
		if r.name != "crun" {
			rs = append(rs, r)
		}
	}
	for i := 0; i < b.o.criuN+1; i++ { // the first round warms up
		for k := range rs {
			r := rs[(i+k)%len(rs)]
			if err := b.checkpointRound(r, sleeper, i, i > 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkpointRound runs the sleeper, checkpoints it and restores it,
// timing the two when keep is true.
func (b *bench) checkpointRound(r *runtime, bundle string, i int, keep bool) error {
	id := r.id("ck", i)
	images := filepath.Join(b.work, "images-"+id)
	defer os.RemoveAll(images)
	defer r.command("delete", "-f", id).Run()
	// stdio /dev/null: a pipe would keep us waiting, a host file cannot
	// be dumped.
	if err := r.command("run", "-d", "--bundle", bundle, id).Run(); err != nil {
		return fmt.Errorf("%s run -d %s: %w", r.name, id, err)
	}
	ck, err := timed(r.command("checkpoint", "--image-path", images, id), nil, nil)
	if err != nil {
		return fmt.Errorf("%s checkpoint: %w", r.name, err)
	}
	rs, err := timed(r.command("restore", "-d", "--bundle", bundle, "--image-path", images, id), nil, nil)
	if err != nil {
		return fmt.Errorf("%s restore: %w", r.name, err)
	}
	if keep {
		r.add(rowCheckpoint, ck)
		r.add(rowRestore, rs)
	}
	return nil
}

// lastLine is the last non-empty line of out.
func lastLine(out []byte) string {
	s := strings.TrimRight(string(out), "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
