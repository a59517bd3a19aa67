package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/husk-runtime/husk/libcontainer/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// printVersion writes --version in runc's layout, five lines: the
// version, the commit it was built from, the runtime-spec version, the Go
// that built it and the libseccomp linked in.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "husk version %s\ncommit: %s\nspec: %s\ngo: %s\nlibseccomp: %s\n",
		version, buildCommit(), specs.Version, runtime.Version(), seccomp.LibraryVersion())
}

// buildCommit is the commit -X main.commit gave, else the one go stamped
// from git ("-dirty" when the tree had changes), else "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
