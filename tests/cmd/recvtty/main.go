// Command recvtty is a console-socket receiver for husk's tests: it
// listens on a unix socket, takes the pty master a container sends with
// --console-socket, and copies the container's terminal output to stdout
// (and, unless -no-stdin, its own stdin to the terminal) until the
// container's side of the terminal is closed.
//
//	recvtty [-no-stdin] [-discard] SOCKET
//	recvtty -many SOCKET    every connection, output thrown away, until killed
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/husk-runtime/husk/libcontainer/console"
)

func main() {
	noStdin := flag.Bool("no-stdin", false, "do not copy stdin to the terminal")
	discard := flag.Bool("discard", false, "throw the output away instead of printing it")
	many := flag.Bool("many", false, "take every connection's terminal, throw its output away, until killed")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: recvtty [-no-stdin] [-discard] SOCKET")
		os.Exit(2)
	}
	run := run
	if *many {
		run = func(path string, _, _ bool) error { return serveMany(path) }
	}
	if err := run(flag.Arg(0), *noStdin, *discard); err != nil {
		fmt.Fprintln(os.Stderr, "recvtty:", err)
		os.Exit(1)
	}
}

// serveMany takes the pty master of each connection and drains it until
// its container side is closed.
func serveMany(path string) error {
	l, err := listen(path)
	if err != nil {
		return err
	}
	defer l.Close()
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			return err
		}
		go func() {
			if master, err := takeMaster(conn); err == nil {
				io.Copy(io.Discard, master)
				master.Close()
			}
		}()
	}
}

func listen(path string) (*net.UnixListener, error) {
	os.Remove(path)
	return net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
}

// takeMaster receives the pty master sent on conn, and closes conn.
func takeMaster(conn *net.UnixConn) (*os.File, error) {
	f, err := conn.File()
	conn.Close()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return console.RecvMaster(f)
}

func run(path string, noStdin, discard bool) error {
	l, err := listen(path)
	if err != nil {
		return err
	}
	defer l.Close()
	conn, err := l.AcceptUnix()
	if err != nil {
		return err
	}
	master, err := takeMaster(conn)
	if err != nil {
		return err
	}
	defer master.Close()
	if !noStdin {
		go io.Copy(master, os.Stdin)
	}
	out := io.Writer(os.Stdout)
	if discard {
		out = io.Discard
	}
	// Read until the last slave fd is closed: then read fails with EIO.
	buf := make([]byte, 32<<10)
	for {
		n, err := master.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				return err
			}
		}
		if err != nil {
			return nil
		}
	}
}
