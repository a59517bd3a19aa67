package libcontainer

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// renderTransitions is the table of transitions as status.go's comment
// shows it.
func renderTransitions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s", "command")
	for _, s := range statuses {
		fmt.Fprintf(&b, "%-19s", s)
	}
	b.WriteString("\n")
	var notes []string
	number := func(text string) int {
		for i, n := range notes {
			if n == text {
				return i + 1
			}
		}
		notes = append(notes, text)
		return len(notes)
	}
	for _, t := range transitions {
		fmt.Fprintf(&b, "%-24s", t.op)
		for _, out := range t.out {
			cell := out.to.String()
			switch {
			case out.refused != nil:
				cell = fmt.Sprintf("refused (%d)", number(out.refused.words()))
			case out.note != "":
				cell = fmt.Sprintf("%s (%d)", cell, number(out.note))
			}
			fmt.Fprintf(&b, "%-19s", cell)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for i, n := range notes {
		fmt.Fprintf(&b, "(%d) %s\n", i+1, n)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		line = strings.TrimRight(line, " ")
		if line == "" {
			out.WriteString("//\n")
		} else {
			out.WriteString("//\t" + line + "\n")
		}
	}
	return out.String()
}

// The comment on Status is the table, not a description of it.
func TestStatusComment(t *testing.T) {
	src, err := os.ReadFile("status.go")
	if err != nil {
		t.Fatal(err)
	}
	want := renderTransitions()
	if !strings.Contains(string(src), want) {
		t.Errorf("status.go's comment does not show the transitions table; it should hold:\n%s", want)
	}
}

// Every command has exactly one outcome from every status, and every
// outcome is either a refusal with words or a status.
func TestTransitionsComplete(t *testing.T) {
	seen := map[Op]bool{}
	for _, tr := range transitions {
		if seen[tr.op] {
			t.Errorf("%s has two rows", tr.op)
		}
		seen[tr.op] = true
		for i, out := range tr.out {
			if out.refused != nil && out.refused.words() == "" {
				t.Errorf("%s from %s: a refusal without words", tr.op, statuses[i])
			}
		}
	}
	for _, op := range []Op{OpStart, OpKill, OpPause, OpResume, OpExec, OpExecIgnorePaused, OpUpdate, OpEvents, OpDelete, OpDeleteForce} {
		if !seen[op] {
			t.Errorf("%s has no row", op)
		}
	}
	if _, err := lookup("frobnicate", Running); err == nil {
		t.Error("an unknown command was not refused")
	}
}

// Walk the table through check on containers faked into each status:
// the error is the refusal's (with runc's words, which clients match),
// or none.
func TestCheckWalksTheTable(t *testing.T) {
	for _, tr := range transitions {
		for i, st := range statuses {
			out := tr.out[i]
			err := refuse(tr.op, "c1", st)
			if out.refused == nil {
				if err != nil {
					t.Errorf("%s from %s: refused with %v, want allowed", tr.op, st, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s from %s: allowed, want %q", tr.op, st, out.refused.words())
			}
		}
	}
	for _, tc := range []struct {
		op   Op
		st   Status
		want string
		is   error
	}{
		{OpKill, Stopped, "container not running", ErrNotRunning},
		{OpPause, Stopped, "container not running", ErrNotRunning},
		{OpResume, Running, "container not paused", ErrNotPaused},
		{OpPause, Paused, "container c1 already paused", nil},
		{OpDelete, Running, "cannot delete container c1 that is not stopped: running", nil},
		{OpDelete, Paused, "cannot delete container c1 that is not stopped: paused", nil},
		{OpStart, Stopped, "cannot start a container that has stopped", nil},
		{OpExec, Stopped, "cannot exec in a stopped container", nil},
	} {
		err := refuse(tc.op, "c1", tc.st)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s from %s: %v, want %q", tc.op, tc.st, err, tc.want)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s from %s: %v is not %v", tc.op, tc.st, err, tc.is)
		}
	}
}
