// Command nnp stands in for registry.k8s.io/e2e-test-images/nonewprivs: a
// set-user-ID root program that prints its effective uid, 0 when the
// kernel honoured the set-uid bit and the uid it ran as when
// no_new_privs kept it from doing so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Printf("Effective uid: %d\n", os.Geteuid())
}
