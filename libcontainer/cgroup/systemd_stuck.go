package cgroup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	systemdDbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs2"
)

// When a D-Bus call times out (a stopped dbus-daemon, a hung systemd),
// the library's one connection of this process, and the lock it holds
// while connecting, belong to a call that may never return: a second
// manager of the library would wait on that lock for ever. So, for the
// rest of the process (create's clean-up after a failed start), a
// container's systemd manager is built without the library: its files
// through fs2, and its unit stopped over systemd's private socket
// (/run/systemd/private, no dbus-daemon in the way), within the timeout.

// dbusStuck is set once a D-Bus call of this process got no answer.
var dbusStuck atomic.Bool

// stuckManager is a container's systemd scope once the library's
// connection is stuck: fs2 for its files, the private socket to stop it.
type stuckManager struct {
	cgroups.Manager // fs2, at the scope's path
	unit            string
	timeout         time.Duration
}

// newStuck is the manager of the scope unit at path (recorded at create).
func newStuck(lc *cgroups.Cgroup, unit, path string, timeout time.Duration) (stuckManager, error) {
	if path == "" {
		return stuckManager{}, fmt.Errorf("systemd unit %s: no cgroup path recorded, and D-Bus is not answering", unit)
	}
	fsm, err := fs2.NewManager(lc, path)
	if err != nil {
		return stuckManager{}, fmt.Errorf("systemd unit %s: %w", unit, err)
	}
	return stuckManager{Manager: fsm, unit: unit, timeout: timeout}, nil
}

func (s stuckManager) refuse(what string) error {
	return fmt.Errorf("systemd unit %s: %s: not tried, an earlier D-Bus call of this command got no answer", s.unit, what)
}

func (s stuckManager) Apply(int) error              { return s.refuse("start") }
func (s stuckManager) Set(*cgroups.Resources) error { return s.refuse("set properties") }

// Destroy stops the unit over the private socket (it was maybe never
// made), resets it if it failed, and removes what is left of its cgroup.
func (s stuckManager) Destroy() error {
	if err := stopPrivate(s.unit, s.timeout); err != nil {
		return err
	}
	return s.Manager.Destroy()
}

// stopPrivate stops unit and resets its failed state through systemd's
// private socket, within timeout. A unit systemd does not know is fine.
func stopPrivate(unit string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		conn, err := systemdDbus.NewSystemdConnectionContext(ctx)
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		ch := make(chan string, 1)
		if _, err := conn.StopUnitContext(ctx, unit, "replace", ch); err != nil {
			if !noSuchUnit(err) {
				done <- err
				return
			}
		} else {
			select {
			case <-ch:
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
		if err := conn.ResetFailedUnitContext(ctx, unit); err != nil && !noSuchUnit(err) && !strings.Contains(err.Error(), "not failed") {
			done <- err
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("systemd unit %s: stop through systemd's private socket: %w", unit, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("systemd unit %s: stop: no answer from systemd on its private socket either in %s", unit, timeout)
	}
}

// noSuchUnit: systemd does not know the unit (never made, or gone).
func noSuchUnit(err error) bool {
	var derr dbus.Error
	if errors.As(err, &derr) {
		return strings.Contains(derr.Name, "NoSuchUnit") || strings.Contains(derr.Name, "NoUnitForInvocationID")
	}
	var perr *dbus.Error
	return errors.As(err, &perr) && strings.Contains(perr.Name, "NoSuchUnit")
}
