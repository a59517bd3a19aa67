// keylabel prints the calling process's session keyring as
// "DESCRIPTION LABEL": its name (_ses.ID for a container's own keyring)
// and its security label (SELinux's keyring label). The VM lane's SELinux
// suite runs it inside containers; it is built static (no libc in the
// container's busybox rootfs).
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	desc, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		fmt.Fprintf(os.Stderr, "keylabel: describe the session keyring: %v\n", err)
		os.Exit(1)
	}
	label, err := unix.KeyctlString(unix.KEYCTL_GET_SECURITY, unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		fmt.Fprintf(os.Stderr, "keylabel: the session keyring's label: %v\n", err)
		os.Exit(1)
	}
	// DESCRIBE gives type;uid;gid;perm;description.
	fields := strings.SplitN(desc, ";", 5)
	fmt.Printf("%s %s\n", fields[len(fields)-1], strings.TrimRight(label, "\x00"))
}
