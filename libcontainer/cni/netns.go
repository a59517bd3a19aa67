package cni

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// NetnsDir is where named network namespaces live, as `ip netns` and
// containerd keep them.
const NetnsDir = "/var/run/netns"

// NetnsPath is the named netns husk makes for container id.
func NetnsPath(id string) string {
	return filepath.Join(NetnsDir, "husk-"+id)
}

// newNetns makes path a bind mount of a new network namespace, as
// `ip netns add` does: the namespace lives as long as the mount, with or
// without processes in it. An existing path is an error and left alone.
func newNetns(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("netns dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("netns %s already exists (another container with this id, or a leftover: ip netns delete %s)",
			path, filepath.Base(path))
	}
	if err != nil {
		return fmt.Errorf("create netns file: %w", err)
	}
	f.Close()
	if err := bindNewNetns(path); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// bindNewNetns unshares a network namespace on a locked thread,
// bind-mounts that thread's namespace onto path and puts the thread back
// in its own. If it cannot go back, the thread stays locked and ends with
// its goroutine, so no other goroutine ever runs in the new namespace.
func bindNewNetns(path string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		const self = "/proc/thread-self/ns/net"
		orig, err := unix.Open(self, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open %s: %w", self, err)
			return
		}
		defer unix.Close(orig)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
			return
		}
		if err := unix.Mount(self, path, "", unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("bind mount %s on %s: %w", self, path, err)
			return
		}
		errc <- nil
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-errc
}

// removeNetns unmounts and removes a netns newNetns made; a path that is
// gone, or no longer a mount, is fine.
func removeNetns(path string) error {
	err := unix.Unmount(path, unix.MNT_DETACH)
	if err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmount netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove netns %s: %w", path, err)
	}
	return nil
}
