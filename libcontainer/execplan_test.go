package libcontainer

import (
	"reflect"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/configs"
)

func TestPlanEnv(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
		fill bool
	}{
		{[]string{"A=1", "HOME=/h", "A=2"}, []string{"HOME=/h", "A=2"}, false},
		{[]string{"A=1", "HOME=", "B=2"}, []string{"A=1", "HOME=", "B=2"}, true},
		{[]string{"A=1"}, []string{"A=1", "HOME="}, true},
		{[]string{"HOME=/x", "HOME="}, []string{"HOME="}, true},
		{nil, []string{"HOME="}, true},
	} {
		got, fill := planEnv(c.in)
		if !reflect.DeepEqual(got, c.want) || fill != c.fill {
			t.Errorf("planEnv(%q) = %q, %v; want %q, %v", c.in, got, fill, c.want, c.fill)
		}
	}
}

func TestExecPlanChoosesTheGoInit(t *testing.T) {
	base := func() *configs.Config {
		return &configs.Config{Process: &configs.Process{Args: []string{"true"}, Cwd: "/",
			Capabilities: &configs.Capabilities{Bounding: []string{"CAP_KILL"}, Effective: []string{"CAP_KILL"}, Permitted: []string{"CAP_KILL"}, Ambient: []string{"CAP_KILL"}}}}
	}
	plan, why := execPlan(base(), &ExecOpts{})
	if plan == nil {
		t.Fatalf("a plain exec has no plan: %s", why)
	}
	if plan.Caps.Bounding != 1<<5 || plan.Caps.Effective != 1<<5 || plan.Caps.Ambient != 0 || plan.Umask != 0o022 {
		t.Errorf("plan: %+v (CAP_KILL is 5; ambient needs inheritable)", plan.Caps)
	}
	for name, change := range map[string]func(c *configs.Config, o *ExecOpts){
		"terminal":    func(c *configs.Config, o *ExecOpts) { c.Process.Terminal = true },
		"apparmor":    func(c *configs.Config, o *ExecOpts) { c.Process.AppArmorProfile = "p" },
		"scheduler":   func(c *configs.Config, o *ExecOpts) { c.Process.Scheduler = &configs.Scheduler{} },
		"ioprio":      func(c *configs.Config, o *ExecOpts) { c.Process.IOPriority = &configs.IOPriority{} },
		"affinity":    func(c *configs.Config, o *ExecOpts) { c.Process.CPUAffinity = &configs.CPUAffinity{} },
		"personality": func(c *configs.Config, o *ExecOpts) { c.Personality = &configs.Personality{} },
		"sub-cgroups": func(c *configs.Config, o *ExecOpts) { o.SubCgroups = map[string]string{"": "x"} },
		"NUL in env":  func(c *configs.Config, o *ExecOpts) { c.Process.Env = []string{"A=\x00"} },
		"bad cap":     func(c *configs.Config, o *ExecOpts) { c.Process.Capabilities.Effective = []string{"CAP_NOPE"} },
		"eff > perm":  func(c *configs.Config, o *ExecOpts) { c.Process.Capabilities.Permitted = nil },
		"forced":      func(c *configs.Config, o *ExecOpts) { t.Setenv(EnvExecPath, "go") },
	} {
		c, o := base(), &ExecOpts{}
		change(c, o)
		if plan, _ := execPlan(c, o); plan != nil {
			t.Errorf("%s: a plan, want the Go init", name)
		}
	}
}
