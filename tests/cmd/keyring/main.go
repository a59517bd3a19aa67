// Command keyring is the attack of husk's security suite on the session
// keyring a container's process is given: run inside one container, it
// makes that keyring joinable and plants a key in it; run inside another
// (or an exec'd process), it looks for that key in its own session
// keyring. Built static (CGO_ENABLED=0), so it runs in a busybox rootfs.
//
//	keyring plant MARK   make the session keyring searchable by all, add a
//	                     "user" key "husk-planted" holding MARK
//	keyring find         print "found MARK" when the session keyring holds
//	                     that key, else "none"; then the keyring's description
package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The key's description; the payload tells the planting container apart.
const planted = "husk-planted"

// allPerms: view, read, write, search, link, setattr for the possessor,
// the user, the group and others.
const allPerms = 0x3f3f3f3f

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ring, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	if err != nil {
		fail("the session keyring", err)
	}
	switch {
	case os.Args[1] == "plant" && len(os.Args) == 3:
		if err := unix.KeyctlSetperm(ring, allPerms); err != nil {
			fail("setperm on the session keyring", err)
		}
		if _, err := unix.AddKey("user", planted, []byte(os.Args[2]), ring); err != nil {
			fail("add_key", err)
		}
		fmt.Println("planted")
	case os.Args[1] == "find" && len(os.Args) == 2:
		key, err := unix.KeyctlSearch(ring, "user", planted, 0)
		if err != nil {
			fmt.Println("none")
			break
		}
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, key, buf, 0)
		if err != nil {
			fail("read the planted key", err)
		}
		fmt.Printf("found %s\n", buf[:min(n, len(buf))])
	default:
		usage()
	}
	desc, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, ring)
	if err != nil {
		fail("describe the session keyring", err)
	}
	fmt.Printf("session keyring %d: %s\n", ring, desc)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: keyring plant MARK | keyring find")
	os.Exit(2)
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "keyring: %s: %v\n", what, err)
	os.Exit(1)
}
