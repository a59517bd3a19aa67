package libcontainer

import "github.com/husk-runtime/husk/libcontainer/notify"

// NotifyRelay binds the notify socket of a container made while
// NOTIFY_SOCKET was set (package notify), when husk has one now; nil when
// there is nothing to relay. Called before Start, so the socket is there
// when the process runs.
func (c *Container) NotifyRelay() (*notify.Relay, error) {
	return notify.Listen(c.dir, notify.HostSocket())
}
