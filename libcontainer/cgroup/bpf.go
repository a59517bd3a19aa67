package cgroup

import (
	"bytes"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// attachDeviceProgram loads prog and attaches it to the cgroup directory
// dir, then detaches the device programs attached there before (so an
// update replaces the rules; between the two steps both apply, which only
// ever denies more).
func attachDeviceProgram(dir string, prog []insn) error {
	cg, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(cg)
	old, err := bpfProgQuery(cg, unix.BPF_CGROUP_DEVICE)
	if err != nil {
		return err
	}
	fd, err := bpfProgLoad(unix.BPF_PROG_TYPE_CGROUP_DEVICE, prog)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := bpfProgAttach(cg, fd, unix.BPF_CGROUP_DEVICE, unix.BPF_F_ALLOW_MULTI); err != nil {
		return err
	}
	for _, id := range old {
		oldFd, err := bpfProgGetFdByID(id)
		if err != nil {
			return err
		}
		err = bpfProgDetach(cg, oldFd, unix.BPF_CGROUP_DEVICE)
		unix.Close(oldFd)
		if err != nil {
			return err
		}
	}
	return nil
}

// bpf is the bpf(2) system call.
func bpf(cmd int, attr unsafe.Pointer, size uintptr) (uintptr, error) {
	for {
		r, _, errno := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(attr), size)
		if errno == unix.EINTR || errno == unix.EAGAIN {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return r, nil
	}
}

// progLoadAttr is the head of union bpf_attr for BPF_PROG_LOAD.
type progLoadAttr struct {
	progType    uint32
	insnCnt     uint32
	insns       uint64
	license     uint64
	logLevel    uint32
	logSize     uint32
	logBuf      uint64
	kernVersion uint32
	progFlags   uint32
}

// bpfProgLoad is BPF_PROG_LOAD; the verifier's log is in the error.
func bpfProgLoad(progType uint32, prog []insn) (int, error) {
	code := encode(prog)
	license := []byte("Apache\x00")
	log := make([]byte, 1<<16)
	attr := progLoadAttr{
		progType: progType,
		insnCnt:  uint32(len(prog)),
		insns:    uint64(uintptr(unsafe.Pointer(&code[0]))),
		license:  uint64(uintptr(unsafe.Pointer(&license[0]))),
		logLevel: 1,
		logSize:  uint32(len(log)),
		logBuf:   uint64(uintptr(unsafe.Pointer(&log[0]))),
	}
	fd, err := bpf(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(code)
	runtime.KeepAlive(license)
	runtime.KeepAlive(log)
	if err != nil {
		if n := bytes.IndexByte(log, 0); n > 0 {
			return 0, fmt.Errorf("bpf prog load: %w: %s", err, log[:n])
		}
		return 0, fmt.Errorf("bpf prog load: %w", err)
	}
	return int(fd), nil
}

// attachAttr is union bpf_attr for BPF_PROG_ATTACH and BPF_PROG_DETACH.
type attachAttr struct {
	targetFd     uint32
	attachBpfFd  uint32
	attachType   uint32
	attachFlags  uint32
	replaceBpfFd uint32
}

func bpfProgAttach(target, prog int, attachType uint32, flags uint32) error {
	attr := attachAttr{targetFd: uint32(target), attachBpfFd: uint32(prog), attachType: attachType, attachFlags: flags}
	if _, err := bpf(unix.BPF_PROG_ATTACH, unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err != nil {
		return fmt.Errorf("bpf prog attach: %w", err)
	}
	return nil
}

func bpfProgDetach(target, prog int, attachType uint32) error {
	attr := attachAttr{targetFd: uint32(target), attachBpfFd: uint32(prog), attachType: attachType}
	if _, err := bpf(unix.BPF_PROG_DETACH, unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err != nil {
		return fmt.Errorf("bpf prog detach: %w", err)
	}
	return nil
}

// queryAttr is union bpf_attr for BPF_PROG_QUERY.
type queryAttr struct {
	targetFd    uint32
	attachType  uint32
	queryFlags  uint32
	attachFlags uint32
	progIDs     uint64
	progCnt     uint32
	_           uint32
}

// bpfProgQuery lists the ids of the programs attached to target itself.
func bpfProgQuery(target int, attachType uint32) ([]uint32, error) {
	ids := make([]uint32, 64)
	attr := queryAttr{
		targetFd:   uint32(target),
		attachType: attachType,
		progIDs:    uint64(uintptr(unsafe.Pointer(&ids[0]))),
		progCnt:    uint32(len(ids)),
	}
	_, err := bpf(unix.BPF_PROG_QUERY, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(ids)
	if err != nil {
		return nil, fmt.Errorf("bpf prog query: %w", err)
	}
	return ids[:attr.progCnt], nil
}

// getFdByIDAttr is union bpf_attr for BPF_PROG_GET_FD_BY_ID.
type getFdByIDAttr struct {
	id        uint32
	nextID    uint32
	openFlags uint32
}

func bpfProgGetFdByID(id uint32) (int, error) {
	attr := getFdByIDAttr{id: id}
	fd, err := bpf(unix.BPF_PROG_GET_FD_BY_ID, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	if err != nil {
		return 0, fmt.Errorf("bpf prog get fd by id %d: %w", id, err)
	}
	return int(fd), nil
}
