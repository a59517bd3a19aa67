// Command recvtty is a console-socket receiver for husk's tests: it
// listens on a unix socket, takes the pty master a container sends with
// --console-socket, and copies the container's terminal output to stdout
// (and, unless -no-stdin, its own stdin to the terminal) until the
// container's side of the terminal is closed.
//
//	recvtty [-no-stdin] [-discard] SOCKET
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
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: recvtty [-no-stdin] [-discard] SOCKET")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *noStdin, *discard); err != nil {
		fmt.Fprintln(os.Stderr, "recvtty:", err)
		os.Exit(1)
	}
}

func run(path string, noStdin, discard bool) error {
	os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return err
	}
	defer l.Close()
	conn, err := l.AcceptUnix()
	if err != nil {
		return err
	}
	f, err := conn.File()
	conn.Close()
	if err != nil {
		return err
	}
	master, err := console.RecvMaster(f)
	f.Close()
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
