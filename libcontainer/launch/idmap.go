package launch

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// idmapMount idmaps the detached mount tree fd (open_tree) with the
// mapping asked: the container's own user namespace (pid is init), or a
// user namespace made for the mapping.
func idmapMount(fd, pid int, idmap *configs.MountIDMap) error {
	userns, err := mappingUserns(pid, idmap)
	if err != nil {
		return err
	}
	defer unix.Close(userns)
	flags := uint(unix.AT_EMPTY_PATH)
	if idmap.Recursive {
		flags |= unix.AT_RECURSIVE
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns)}
	if err := unix.MountSetattr(fd, "", flags, attr); err != nil {
		return os.NewSyscallError("mount_setattr(MOUNT_ATTR_IDMAP)", err)
	}
	return nil
}

// mappingUserns opens a user namespace with idmap's mapping: init's own
// (new or joined) when the mapping is implied, else a new one.
func mappingUserns(pid int, idmap *configs.MountIDMap) (int, error) {
	if len(idmap.UIDMappings) == 0 {
		fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("open the container's user namespace: %w", err)
		}
		return fd, nil
	}
	return newMappedUserns(idmap.UIDMappings, idmap.GIDMappings)
}

// newMappedUserns makes a user namespace with the given maps and returns
// an fd of it. Its only process is a child started stopped (traced, so it
// stops at its exec before running any code), which is killed once the
// namespace is open: the fd alone keeps the namespace.
func newMappedUserns(uids, gids []configs.IDMap) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return -1, err
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{"husk-idmap-userns"}
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: sysMaps(uids),
		GidMappings: sysMaps(gids),
		Ptrace:      true,
		Pdeathsig:   unix.SIGKILL,
	}
	runtime.LockOSThread() // the tracer is this thread
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("start a process in a user namespace for the mapping: %w", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	fd, err := unix.Open("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the mapping's user namespace: %w", err)
	}
	return fd, nil
}

func sysMaps(maps []configs.IDMap) []syscall.SysProcIDMap {
	out := make([]syscall.SysProcIDMap, len(maps))
	for i, m := range maps {
		out[i] = syscall.SysProcIDMap{ContainerID: int(m.ContainerID), HostID: int(m.HostID), Size: int(m.Size)}
	}
	return out
}
