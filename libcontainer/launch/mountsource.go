package launch

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/husk-runtime/husk/libcontainer/bootstrap"
	"github.com/husk-runtime/husk/libcontainer/configs"
	"github.com/husk-runtime/husk/libcontainer/rootfs"
	"golang.org/x/sys/unix"
)

// answerMountSource answers init's MOUNT_SOURCE(N): it opens mounts[N]'s
// source for init, with the runtime's credentials, from inside init's mount
// namespace (so a source under an earlier mount of the container sees
// it), and passes the fd over sock. The parent's copy is closed once sent.
func answerMountSource(sock *credReader, pid int, cfg *configs.Config, payload []byte) error {
	fd, err := openMountSource(pid, cfg, payload)
	serr := bootstrap.SendMountFd(sock.File, fd, err)
	if fd >= 0 {
		unix.Close(fd)
	}
	return serr
}

func openMountSource(pid int, cfg *configs.Config, payload []byte) (int, error) {
	if len(payload) != 4 {
		return -1, fmt.Errorf("MOUNT_SOURCE payload of %d bytes, want 4", len(payload))
	}
	i := int(binary.NativeEndian.Uint32(payload))
	if i >= len(cfg.Mounts) || !cfg.SourceOutside(cfg.Mounts[i]) {
		return -1, fmt.Errorf("MOUNT_SOURCE for mounts[%d], which is not a bind opened outside", i)
	}
	// init names the mount in front of what goes wrong here.
	m := cfg.Mounts[i]
	fd, err := openSourceIn(pid, cfg, m)
	if err != nil {
		return -1, fmt.Errorf("open the source outside the container: %w", err)
	}
	if m.IDMap == nil {
		return fd, nil
	}
	if err := idmapMount(fd, pid, m.IDMap); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("idmap: %w", err)
	}
	return fd, nil
}

// openSourceIn opens m.Source from init's mount namespace, resolved as
// rootfs.OpenSource resolves it (inside the rootfs when it lies there):
// an O_PATH fd for a plain bind, which init binds through /proc/self/fd;
// for an idmapped one a detached copy of the mount tree (open_tree),
// which init attaches with move_mount once it is idmapped.
func openSourceIn(pid int, cfg *configs.Config, m *configs.Mount) (int, error) {
	fd := -1
	err := inMountNamespace(pid, func() error {
		var err error
		if fd, err = rootfs.OpenSource(cfg.Rootfs, m.Source); err != nil || m.IDMap == nil {
			return err
		}
		flags := unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH
		if m.Flags&unix.MS_REC != 0 {
			flags |= unix.AT_RECURSIVE
		}
		tree, err := unix.OpenTree(fd, "", uint(flags))
		unix.Close(fd)
		fd = tree
		if err != nil {
			return &os.PathError{Op: "open_tree", Path: m.Source, Err: err}
		}
		return nil
	})
	return fd, err
}

// inMountNamespace runs fn on a thread of its own that has joined the
// mount namespace of pid. The thread is never handed back to Go's
// scheduler: it exits with the goroutine.
func inMountNamespace(pid int, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no Unlock: the thread dies with us
		done <- func() error {
			ns, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open init's mount namespace: %w", err)
			}
			defer unix.Close(ns)
			if err := unix.Unshare(unix.CLONE_FS); err != nil {
				return fmt.Errorf("unshare(CLONE_FS): %w", err)
			}
			if err := unix.Setns(ns, unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("setns to init's mount namespace: %w", err)
			}
			return fn()
		}()
	}()
	return <-done
}
