// Package nsenter runs nsexec.c before the Go runtime starts. Importing it
// (only `husk init` does) links a C constructor that does nothing unless
// the environment names an init socket (bootstrap.EnvInitPipe); then it
// joins and unshares namespaces, forks, and lets Go start in the child.
// See libcontainer/bootstrap/protocol.go for the conversation.
package nsenter

/*
#cgo CFLAGS: -Wall -Werror -I${SRCDIR}/../libcontainer/bootstrap
#include "nsexec.h"

__attribute__((constructor)) static void husk_nsenter_init(void)
{
	husk_nsexec();
}
*/
import "C"
