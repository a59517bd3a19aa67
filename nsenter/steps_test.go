package nsenter

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/nsenter/internal/steptable"
)

// step is one row of the launcher's step table: husk_steps in launch.c,
// and the table in docs/architecture.md.
type step = steptable.Row

// cSteps reads husk_steps from launch.c (a NULL applies is "always").
func cSteps(t *testing.T) []step {
	t.Helper()
	rows, err := steptable.Read("launch.c")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// docSteps reads the table under "The launcher's steps, with runc's" in
// docs/architecture.md: | # | step | applies | runs | runc's place | why |.
func docSteps(t *testing.T) []step {
	t.Helper()
	src, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	i := strings.Index(text, "### The launcher's steps, with runc's")
	if i < 0 {
		t.Fatal(`docs/architecture.md: no "The launcher's steps, with runc's" section`)
	}
	var rows []step
	for _, line := range strings.Split(text[i:], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 8 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue // the header and its rule
		}
		if n != len(rows)+1 {
			t.Fatalf("docs/architecture.md: step row %d numbered %d", len(rows)+1, n)
		}
		if strings.TrimSpace(cells[5]) == "" || strings.TrimSpace(cells[6]) == "" {
			t.Errorf("docs/architecture.md: step %d has no runc's place or no reason", n)
		}
		rows = append(rows, step{Name: strings.TrimSpace(cells[2]), Applies: strings.TrimSpace(cells[3]), Runs: strings.TrimSpace(cells[4])})
	}
	return rows
}

func TestStepsMatchDoc(t *testing.T) {
	c, d := cSteps(t), docSteps(t)
	for i := 0; i < len(c) || i < len(d); i++ {
		var cs, ds step
		if i < len(c) {
			cs = c[i]
		}
		if i < len(d) {
			ds = d[i]
		}
		if cs != ds {
			t.Errorf("step %d: launch.c has %+v, docs/architecture.md %+v", i+1, cs, ds)
		}
	}
}

// orderErrors checks the rules the launcher's order must keep; each
// error names the rule. The launch's behaviour rests on them: the seccomp
// tests (a filter notifying every syscall), SCHED_DEADLINE for a user and
// the cwd findings (tests/security/findings.bats) show what breaks.
func orderErrors(rows []step) []error {
	var errs []error
	at := func(runs string) []int {
		var idx []int
		for i, r := range rows {
			if r.Runs == runs {
				idx = append(idx, i)
			}
		}
		return idx
	}
	first := func(runs string) int {
		if idx := at(runs); len(idx) > 0 {
			return idx[0]
		}
		errs = append(errs, fmt.Errorf("no step runs %s", runs))
		return -1
	}
	// The listener gets its fd right after each filter: any step between
	// could make a syscall the filter gives the listener to answer.
	pairs := map[string]string{"filter_early": "listener_early", "filter_late": "listener_late"}
	for _, i := range at("load_seccomp") {
		want := pairs[rows[i].Applies]
		if i+1 >= len(rows) || rows[i+1].Runs != "hand_over_listener" || rows[i+1].Applies != want {
			errs = append(errs, fmt.Errorf("step %d (%s, %s) is not followed by the listener's hand-over (applies %s)",
				i+1, rows[i].Name, rows[i].Applies, want))
		}
	}
	// The listener's buffer is allocated before any filter.
	room := first("listener_room")
	for _, i := range at("load_seccomp") {
		if room > i {
			errs = append(errs, fmt.Errorf("the listener's room (step %d) comes after the filter (step %d)", room+1, i+1))
		}
	}
	// The scheduler before the credentials drop the capabilities.
	sched, creds := first("husk_set_scheduler"), first("husk_set_credentials")
	if sched > creds {
		errs = append(errs, fmt.Errorf("the scheduler (step %d) comes after the credentials (step %d)", sched+1, creds+1))
	}
	// cwd: as root before the credentials, as the user only after them.
	if cwd := first("enter_cwd"); cwd > creds {
		errs = append(errs, fmt.Errorf("cwd (step %d) comes after the credentials (step %d)", cwd+1, creds+1))
	}
	if user := first("chdir_as_user"); user < creds {
		errs = append(errs, fmt.Errorf("cwd as the user (step %d) comes before the credentials (step %d)", user+1, creds+1))
	}
	// An early fork comes before the scheduler (SCHED_DEADLINE cannot
	// fork) and before the first filter (the listener's message has the
	// pid); a late one after the last listener.
	for _, i := range at("fork_process") {
		switch rows[i].Applies {
		case "forks_early":
			if i > sched || i > first("load_seccomp") {
				errs = append(errs, fmt.Errorf("the early fork (step %d) is not before the scheduler and the filter", i+1))
			}
		case "forks_late":
			if l := at("hand_over_listener"); len(l) > 0 && i < l[len(l)-1] {
				errs = append(errs, fmt.Errorf("the late fork (step %d) comes before a listener's hand-over", i+1))
			}
		}
	}
	if len(rows) == 0 || rows[len(rows)-1].Runs != "husk_launch_exec" {
		errs = append(errs, fmt.Errorf("the last step is not execve (husk_launch_exec)"))
	}
	return errs
}

func TestStepOrderRules(t *testing.T) {
	for _, err := range orderErrors(cSteps(t)) {
		t.Error(err)
	}
}

// Each rule fails on a table that breaks it.
func TestStepOrderRulesCatchMoves(t *testing.T) {
	rows := cSteps(t)
	find := func(rs []step, runs, applies string) int {
		for i, r := range rs {
			if r.Runs == runs && (applies == "" || r.Applies == applies) {
				return i
			}
		}
		t.Fatalf("no step runs %s %s", runs, applies)
		return -1
	}
	move := func(from, to int) []step {
		rs := append([]step(nil), rows...)
		r := rs[from]
		rs = append(rs[:from], rs[from+1:]...)
		rs = append(rs[:to], append([]step{r}, rs[to:]...)...)
		return rs
	}
	for _, tc := range []struct {
		what string
		rows func() []step
	}{
		{"a step between the early filter and its listener", func() []step {
			return move(find(rows, "enter_cwd", ""), find(rows, "load_seccomp", "filter_early")+1)
		}},
		{"a step between the late filter and its listener", func() []step {
			return move(find(rows, "husk_look_path", ""), find(rows, "load_seccomp", "filter_late"))
		}},
		{"the listener's room after the filter", func() []step {
			return move(find(rows, "listener_room", ""), find(rows, "hand_over_listener", "listener_early"))
		}},
		{"the scheduler after the credentials", func() []step {
			return move(find(rows, "husk_set_scheduler", ""), find(rows, "husk_set_credentials", ""))
		}},
		{"cwd after the credentials", func() []step {
			return move(find(rows, "enter_cwd", ""), find(rows, "husk_set_credentials", ""))
		}},
		{"cwd as the user before the credentials", func() []step {
			return move(find(rows, "chdir_as_user", ""), find(rows, "husk_set_credentials", ""))
		}},
		{"the early fork after the scheduler", func() []step {
			return move(find(rows, "fork_process", "forks_early"), find(rows, "husk_set_scheduler", ""))
		}},
	} {
		if errs := orderErrors(tc.rows()); len(errs) == 0 {
			t.Errorf("%s: no rule failed", tc.what)
		}
	}
}
