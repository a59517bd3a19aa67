package launch

import (
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
)

func TestInitExtrasNone(t *testing.T) {
	x, err := initExtrasFor(&configs.Config{Process: &configs.Process{Args: []string{"sh"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	if len(x.files) != 0 || len(x.names) != 0 {
		t.Errorf("extras without terminal or seccomp: %v %v", x.files, x.names)
	}
}

// The parent compiles the filter and connects to the console socket and
// the listener; init learns their fd numbers from its environment.
func TestInitExtras(t *testing.T) {
	dir := t.TempDir()
	var socks []string
	for _, name := range []string{"console.sock", "listener.sock"} {
		path := filepath.Join(dir, name)
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		socks = append(socks, path)
	}
	cfg := &configs.Config{
		Process: &configs.Process{Args: []string{"sh"}, Terminal: true, ConsoleSocket: socks[0]},
		Seccomp: &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", ListenerPath: socks[1],
			Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_NOTIFY"}}},
	}
	x, err := initExtrasFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	if cfg.Seccomp.Program != nil {
		t.Error("dialing the sockets wrote into the config")
	}
	want := []string{bootstrap.EnvConsoleFd + "=8", bootstrap.EnvListenerFd + "=9"}
	if got := bootstrap.InitEnv(5, true, false, false, x.names)[3:5]; !slices.Equal(got, want) || len(x.files) != 2 {
		t.Errorf("env %q with %d files, want %q", got, len(x.files), want)
	}
}

func TestInitExtrasErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  *configs.Config
		want string
	}{
		{&configs.Config{Process: &configs.Process{Terminal: true}}, "process.terminal: a container with a terminal needs --console-socket"},
		{&configs.Config{Process: &configs.Process{Terminal: true, ConsoleSocket: "/nonexistent/c.sock"}}, "--console-socket /nonexistent/c.sock"},
		{&configs.Config{Process: &configs.Process{}, Seccomp: &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW", ListenerPath: "/nonexistent/l.sock",
			Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_NOTIFY"}}}}, "linux.seccomp.listenerPath: failed to connect with seccomp agent specified in the seccomp profile: dial unix /nonexistent/l.sock"},
		{&configs.Config{Process: &configs.Process{}, Seccomp: &configs.Seccomp{DefaultAction: "SCMP_ACT_BAD"}}, "linux.seccomp.defaultAction"},
	} {
		x, err := initExtrasFor(tc.cfg)
		if err == nil {
			x.close()
			t.Errorf("no error, want %q", tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("error %q, want it to start %q", err, tc.want)
		}
	}
}

// initExtrasFor is what the parent does for cfg before it starts init:
// compile the filter, then dial the sockets.
func initExtrasFor(cfg *configs.Config) (*initExtras, error) {
	cfg, err := WithCompiledSeccomp(cfg)
	if err != nil {
		return nil, err
	}
	return dialInitSockets(cfg)
}

// The filter is compiled into a copy: the caller's config is not changed.
func TestWithCompiledSeccomp(t *testing.T) {
	cfg := &configs.Config{Process: &configs.Process{Args: []string{"sh"}},
		Seccomp: &configs.Seccomp{DefaultAction: "SCMP_ACT_ALLOW",
			Syscalls: []*configs.Syscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_ERRNO"}}}}
	got, err := WithCompiledSeccomp(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seccomp.Program == nil || len(got.Seccomp.Program.Filter) == 0 {
		t.Error("the filter was not compiled")
	}
	if cfg.Seccomp.Program != nil {
		t.Error("the caller's config was changed")
	}
	if again, _ := WithCompiledSeccomp(got); again != got {
		t.Error("a compiled filter was compiled again")
	}
	if none, _ := WithCompiledSeccomp(&configs.Config{}); none.Seccomp != nil {
		t.Error("a config without seccomp got a filter")
	}
}
