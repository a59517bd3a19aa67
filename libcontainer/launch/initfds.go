package launch

import (
	"fmt"
	"net"
	"os"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/console"
	"github.com/husk-runtime/husk/libcontainer/seccomp"
	"github.com/husk-runtime/husk/libcontainer/trace"
)

// initExtras are the connections the parent makes for init beyond the
// spine, in the runtime's namespaces and with its credentials: to the
// console socket and the seccomp listener (init, inside the container,
// could not reach them).
type initExtras struct {
	files []*os.File
	names []string // the environment variable of each file
}

// dialInitSockets connects to the sockets cfg names for init. Close them
// once init has started.
func dialInitSockets(cfg *configs.Config) (*initExtras, error) {
	x := &initExtras{}
	if f := trace.ChildFile(); f != nil {
		x.add(trace.EnvFd, f) // HUSK_TRACE: init appends its marks too
	}
	if p := cfg.Process; p != nil && p.Terminal {
		if p.ConsoleSocket == "" {
			return nil, fmt.Errorf("process.terminal: a container with a terminal needs --console-socket (or husk run in the foreground)")
		}
		f, err := console.Dial(p.ConsoleSocket)
		if err != nil {
			return nil, err
		}
		x.add(bootstrap.EnvConsoleFd, f)
	}
	if s := cfg.Seccomp; s != nil && s.UsesNotify() {
		f, err := dialUnix(s.ListenerPath)
		if err != nil {
			x.close()
			return nil, fmt.Errorf("linux.seccomp.listenerPath: failed to connect with seccomp agent specified in the seccomp profile: %w", err)
		}
		x.add(bootstrap.EnvListenerFd, f)
	}
	return x, nil
}

func (x *initExtras) add(name string, f *os.File) {
	x.names = append(x.names, name)
	x.files = append(x.files, f)
}

// close closes the parent's copies.
func (x *initExtras) close() {
	for _, f := range x.files {
		f.Close()
	}
}

// dialUnix connects to the stream socket at path.
func dialUnix(path string) (*os.File, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.File()
}

// WithCompiledSeccomp is cfg with its seccomp filter compiled into a BPF
// program (a copy; cfg itself when there is no filter or it is compiled
// already). Init only loads the program: libseccomp runs in the parent.
func WithCompiledSeccomp(cfg *configs.Config) (*configs.Config, error) {
	if cfg.Seccomp == nil || cfg.Seccomp.Program != nil {
		return cfg, nil
	}
	s := *cfg.Seccomp
	if err := seccomp.Compile(&s); err != nil {
		return nil, err
	}
	c := *cfg
	c.Seccomp = &s
	return &c, nil
}
