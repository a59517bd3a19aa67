package cgroup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	"golang.org/x/sys/unix"
)

// memoryDir is the container's memory cgroup and whether it is a v2 one.
func (m *Manager) memoryDir() (string, bool, error) {
	if p := m.v1Path("memory"); p != "" {
		return p, false, nil
	}
	if m.v2 != nil && m.unified["memory"] {
		return m.v2.Path(""), true, nil
	}
	return "", false, errors.New("the container has no memory cgroup (no memory controller on this host)")
}

func (m *Manager) v1Path(c string) string {
	if m.v1 == nil {
		return ""
	}
	return m.v1.Path(c)
}

// OOMKillCount is how many of the container's processes the kernel has
// killed for want of memory.
func (m *Manager) OOMKillCount() (uint64, error) {
	dir, v2, err := m.memoryDir()
	if err != nil {
		return 0, err
	}
	if v2 {
		return fs2.OOMKillCount(dir)
	}
	return fs.OOMKillCount(dir)
}

// NotifyOOM sends on the returned channel each time the container runs
// out of memory (v1: an eventfd registered on memory.oom_control; v2:
// inotify on memory.events, counting oom_kill). The channel is closed
// when stop is closed or the cgroup goes away.
func (m *Manager) NotifyOOM(stop <-chan struct{}) (<-chan struct{}, error) {
	dir, v2, err := m.memoryDir()
	if err != nil {
		return nil, err
	}
	if v2 {
		return notifyOOMv2(dir, stop)
	}
	return notifyOOMv1(dir, stop)
}

// notifyOOMv1 registers an eventfd for memory.oom_control through
// cgroup.event_control. The kernel also signals it when the cgroup is
// removed, which the loop tells apart by cgroup.event_control vanishing.
func notifyOOMv1(dir string, stop <-chan struct{}) (<-chan struct{}, error) {
	ctl, err := os.Open(filepath.Join(dir, "memory.oom_control"))
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	ev := os.NewFile(uintptr(efd), "oom-eventfd") // non-blocking: Close unblocks Read
	reg := fmt.Sprintf("%d %d", efd, ctl.Fd())
	if err := os.WriteFile(filepath.Join(dir, "cgroup.event_control"), []byte(reg), 0); err != nil {
		ev.Close()
		return nil, fmt.Errorf("register for OOM events of %s: %w", dir, err)
	}
	return pump(ev, stop, func(buf []byte) (bool, bool) {
		if _, err := os.Stat(filepath.Join(dir, "cgroup.event_control")); err != nil {
			return false, true // the cgroup is gone
		}
		return len(buf) == 8 && binary.NativeEndian.Uint64(buf) > 0, false
	})
}

// notifyOOMv2 watches memory.events and reports each rise of oom_kill.
func notifyOOMv2(dir string, stop <-chan struct{}) (<-chan struct{}, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	in := os.NewFile(uintptr(fd), "oom-inotify")
	events := filepath.Join(dir, "memory.events")
	if _, err := unix.InotifyAddWatch(fd, events, unix.IN_MODIFY|unix.IN_DELETE_SELF|unix.IN_IGNORED); err != nil {
		in.Close()
		return nil, fmt.Errorf("inotify_add_watch %s: %w", events, err)
	}
	last, _ := fs2.OOMKillCount(dir)
	return pump(in, stop, func([]byte) (bool, bool) {
		n, err := fs2.OOMKillCount(dir)
		if err != nil {
			return false, true // the cgroup is gone
		}
		oom := n > last
		last = n
		return oom, false
	})
}

// pump reads f until stop or done, sending on the channel whenever check
// says a read means an OOM.
func pump(f *os.File, stop <-chan struct{}, check func(buf []byte) (oom, done bool)) (<-chan struct{}, error) {
	ch := make(chan struct{}, 16)
	go func() {
		<-stop
		f.Close()
	}()
	go func() {
		defer close(ch)
		defer f.Close()
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if err != nil {
				return
			}
			oom, done := check(buf[:n])
			if oom {
				select {
				case ch <- struct{}{}:
				default: // a slow reader misses some, never blocks us
				}
			}
			if done {
				return
			}
		}
	}()
	return ch, nil
}
