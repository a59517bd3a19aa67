// Package notify relays a container's sd_notify readiness to the service
// manager that runs husk, as runc does for a systemd unit of Type=notify.
//
// When NOTIFY_SOCKET is set in husk's environment at create (or run), the
// container gets a socket of husk's instead: the directory ROOT/ID/notify
// is bind-mounted (read-only) at /run/notify in the container and the
// process's NOTIFY_SOCKET names /run/notify/notify.sock. At start (or
// run) husk binds that socket, starts the process and waits for a
// datagram holding READY=1; it then sends "MAINPID=<container pid>" and
// READY=1 to the host's NOTIFY_SOCKET, so the unit becomes active and
// follows the container's process. Nothing else the container sends is
// relayed: it cannot name another main pid or speak for the unit.
package notify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

const (
	// EnvName is the variable systemd sets and the container gets.
	EnvName = "NOTIFY_SOCKET"
	// DirName is the directory in the container's state dir that holds
	// the socket and is bind-mounted into the container.
	DirName = "notify"
	// ContainerDir is where that directory appears in the container.
	ContainerDir = "/run/notify"
	sockName     = "notify.sock"
	// maxMessage bounds one datagram read (sd_notify's are a few lines).
	maxMessage = 4096
)

// HostSocket is the service manager's socket husk was given, or "".
func HostSocket() string {
	return os.Getenv(EnvName)
}

// AddToSpec gives the container the relay's socket: a read-only bind of
// stateDir/notify at /run/notify (after the spec's own mounts, checked and
// made like any other bind) and NOTIFY_SOCKET naming the socket in it,
// in place of any NOTIFY_SOCKET the spec sets.
func AddToSpec(spec *specs.Spec, stateDir string) {
	spec.Mounts = append(spec.Mounts, specs.Mount{
		Destination: ContainerDir,
		Type:        "bind",
		Source:      filepath.Join(stateDir, DirName),
		Options:     []string{"bind", "nosuid", "noexec", "nodev", "ro"},
	})
	if spec.Process == nil {
		return
	}
	env := spec.Process.Env[:0:0]
	for _, e := range spec.Process.Env {
		if len(e) > len(EnvName) && e[:len(EnvName)+1] == EnvName+"=" {
			continue
		}
		env = append(env, e)
	}
	spec.Process.Env = append(env, EnvName+"="+filepath.Join(ContainerDir, sockName))
}

// MakeDir makes stateDir/notify, the bind mount's source, before the
// container's mounts are made. Only the owner writes there; the socket in
// it is made writable for the container's users by Listen.
func MakeDir(stateDir string) error {
	dir := filepath.Join(stateDir, DirName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("notify socket dir %s: %w", dir, err)
	}
	return nil
}

// Relay is the bound socket of a container and the host's address.
type Relay struct {
	fd   int
	path string
	host string
}

// Listen binds stateDir/notify/notify.sock for a container made with
// AddToSpec. It returns nil (and no error) when host is "" or the
// container was made without NOTIFY_SOCKET (no notify directory): then
// there is nothing to relay.
func Listen(stateDir, host string) (*Relay, error) {
	if host == "" {
		return nil, nil
	}
	dir := filepath.Join(stateDir, DirName)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	path := filepath.Join(dir, sockName)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("notify socket: %w", err)
	}
	// A socket left by a start that failed after binding it.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		unix.Close(fd)
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind notify socket %s: %w", path, err)
	}
	// Any user of the container (a user namespace's root included) may send.
	if err := os.Chmod(path, 0o777); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	return &Relay{fd: fd, path: path, host: host}, nil
}

// Close closes the socket; the file goes with the state directory.
func (r *Relay) Close() {
	if r != nil && r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// WaitReady waits until the container says READY=1 and then tells the
// host, with MAINPID=pid. It returns without telling the host when the
// process pid ends first (nil: the caller reports the exit as it does
// without a notify socket).
func (r *Relay) WaitReady(pid int) error {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("notify: pidfd of %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	buf := make([]byte, maxMessage)
	for {
		fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(pidfd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("notify: poll: %w", err)
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			n, _, err := unix.Recvfrom(r.fd, buf, unix.MSG_DONTWAIT)
			if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
				return fmt.Errorf("notify: read %s: %w", r.path, err)
			}
			if n > 0 && isReady(buf[:n]) {
				return r.tellHost(pid)
			}
			continue
		}
		if fds[1].Revents != 0 {
			return nil
		}
	}
}

// isReady says whether a datagram holds the line READY=1.
func isReady(msg []byte) bool {
	for _, line := range bytes.Split(msg, []byte{'\n'}) {
		if string(line) == "READY=1" {
			return true
		}
	}
	return false
}

// tellHost sends one datagram to the host's socket: the new main pid and
// readiness together, so the service manager takes both at once.
func (r *Relay) tellHost(pid int) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("notify: socket: %w", err)
	}
	defer unix.Close(fd)
	msg := []byte("MAINPID=" + strconv.Itoa(pid) + "\nREADY=1\n")
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrUnix{Name: r.host}); err != nil {
		return fmt.Errorf("notify: send READY=1 to %s %s: %w", EnvName, r.host, err)
	}
	return nil
}
