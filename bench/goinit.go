package main

import (
	"bytes"
	"os/exec"
	"strconv"
)

// goInits counts, for each husk build, the Go package initialisers one
// husk process runs and the time they take (GODEBUG=inittrace=1 on
// `husk --version`; every husk process runs the same ones; `husk init`,
// C only, runs none), median of 21. runc and crun get none.
func (b *bench) goInits() error {
	for _, r := range b.runtimes {
		if r.name != "husk" && r.name != "husk-base" {
			continue
		}
		for i := 0; i < 21; i++ {
			cmd := exec.Command(r.bin, "--version")
			cmd.Env = []string{"GODEBUG=inittrace=1"}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				return err
			}
			n, ms := initTrace(stderr.Bytes())
			r.addValue(valInits, float64(n))
			r.addValue(valInitMs, ms)
		}
	}
	return nil
}

// initTrace sums inittrace's lines: "init PKG @T ms, D ms clock, ...".
func initTrace(data []byte) (n int, ms float64) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 7 || string(f[0]) != "init" || string(f[6]) != "clock," {
			continue
		}
		d, err := strconv.ParseFloat(string(f[4]), 64)
		if err != nil {
			continue
		}
		n++
		ms += d
	}
	return n, ms
}
