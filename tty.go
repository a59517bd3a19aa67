package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"

	"github.com/containerd/console"
	"github.com/husk-runtime/husk/libcontainer/configs"
	pty "github.com/husk-runtime/husk/libcontainer/console"
	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
)

// setupTerminal decides where the pty master of a process.terminal
// container goes: to --console-socket, or (husk run in the foreground) to
// a socket of husk's own, which it returns to attach the caller's
// terminal. Without a terminal, --console-socket is an error, as in runc.
func setupTerminal(cmd *cli.Command, p *configs.Process, detach bool) (*foregroundTTY, error) {
	sock := cmd.String("console-socket")
	switch {
	case !p.Terminal && sock != "":
		return nil, fmt.Errorf("--console-socket %s: the process has no terminal (process.terminal is false)", sock)
	case !p.Terminal:
		return nil, nil
	case sock != "":
		abs, err := filepath.Abs(sock)
		if err != nil {
			return nil, fmt.Errorf("--console-socket %q: %w", sock, err)
		}
		p.ConsoleSocket = abs
		return nil, nil
	case detach:
		return nil, errors.New("process.terminal: a detached container needs --console-socket to receive its terminal")
	}
	t, err := newForegroundTTY()
	if err != nil {
		return nil, err
	}
	p.ConsoleSocket = t.path
	return t, nil
}

// foregroundTTY is `husk run` with a terminal and no --console-socket:
// husk receives the pty master itself and copies between it and its own
// stdio, with the caller's terminal in raw mode, like runc.
type foregroundTTY struct {
	dir      string
	path     string
	listener *net.UnixListener
	master   *os.File
	caller   console.Console // nil when stdin is not a terminal
	output   sync.WaitGroup
	winch    chan os.Signal
}

// newForegroundTTY listens on a socket in a private temporary directory.
func newForegroundTTY() (*foregroundTTY, error) {
	dir, err := os.MkdirTemp("", "husk-tty-")
	if err != nil {
		return nil, fmt.Errorf("process.terminal: %w", err)
	}
	t := &foregroundTTY{dir: dir, path: filepath.Join(dir, "console.sock")}
	t.listener, err = net.ListenUnix("unix", &net.UnixAddr{Name: t.path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("process.terminal: %w", err)
	}
	return t, nil
}

// receive takes the master that init sent while the container was made.
func (t *foregroundTTY) receive() error {
	conn, err := t.listener.AcceptUnix()
	if err != nil {
		return fmt.Errorf("process.terminal: %w", err)
	}
	f, err := conn.File()
	conn.Close()
	if err != nil {
		return fmt.Errorf("process.terminal: %w", err)
	}
	defer f.Close()
	if t.master, err = pty.RecvMaster(f); err != nil {
		return err
	}
	// The pty gets the caller's size now, before start: the process may
	// ask for it (stty size) before attach.
	if c, err := console.ConsoleFromFile(os.Stdin); err == nil {
		t.caller = c
		t.resize()
	}
	return nil
}

// attach copies the master to stdout and stdin to the master, with the
// caller's terminal raw and the pty's size following it.
func (t *foregroundTTY) attach() error {
	if c := t.caller; c != nil {
		if err := c.SetRaw(); err != nil {
			return fmt.Errorf("set the terminal raw: %w", err)
		}
		t.winch = make(chan os.Signal, 1)
		signal.Notify(t.winch, unix.SIGWINCH)
		t.resize()
		go func() {
			for range t.winch {
				t.resize()
			}
		}()
	}
	// ONLCR was cleared by init on the pty itself (console.Setup), for
	// every caller, as runc does.
	t.output.Add(1)
	go func() {
		defer t.output.Done()
		copyOutput(os.Stdout, t.master)
	}()
	go func() {
		io.Copy(t.master, os.Stdin)
		if t.caller == nil {
			t.master.Write([]byte{4}) // end of input: ^D to the terminal
		}
	}()
	return nil
}

// resize gives the pty the caller's terminal size.
func (t *foregroundTTY) resize() {
	ws, err := t.caller.Size()
	if err != nil {
		return
	}
	pty.SetSize(t.master, configs.ConsoleSize{Height: ws.Height, Width: ws.Width})
}

// copyOutput copies until the last slave fd is closed (read gives EIO).
func copyOutput(dst io.Writer, master io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := master.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// close waits for the container's last output and gives the caller's
// terminal back as it was.
func (t *foregroundTTY) close() {
	if t == nil {
		return
	}
	if t.master != nil {
		t.output.Wait()
		t.master.Close()
	}
	if t.winch != nil {
		signal.Stop(t.winch)
		close(t.winch)
	}
	if t.caller != nil {
		t.caller.Reset()
	}
	t.removeSocket()
}

// removeSocket removes the listening socket and its directory.
func (t *foregroundTTY) removeSocket() {
	if t.listener != nil {
		t.listener.Close()
		t.listener = nil
	}
	os.RemoveAll(t.dir)
}
