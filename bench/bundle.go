package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// makeBundle writes a bundle at dir: rootfs/ with a static busybox and its
// applet links, and config.json (configJSON) running `true`.
func makeBundle(dir, busybox string) error {
	rootfs := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "etc", "proc", "sys", "dev", "tmp"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("%w (install busybox-static)", err)
	}
	bb := filepath.Join(rootfs, "bin", "busybox")
	if err := os.WriteFile(bb, data, 0o755); err != nil {
		return err
	}
	list, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return fmt.Errorf("%s --list: %w (is it static?)", bb, err)
	}
	for _, applet := range strings.Fields(string(list)) {
		link := filepath.Join(rootfs, "bin", applet)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink("busybox", link); err != nil {
			return err
		}
	}
	passwd := "root:x:0:0:root:/root:/bin/sh\n"
	if err := os.WriteFile(filepath.Join(rootfs, "etc", "passwd"), []byte(passwd), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), []byte(configJSON), 0o644)
}

// configJSON is the usual default spec (as `runc spec` writes it, less the
// cgroup mount and ambient capabilities) with a non-interactive process: the
// same config for every runtime timed.
const configJSON = `{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": ["true"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "bench",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
     "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]}
  ],
  "linux": {
    "namespaces": [
      {"type": "pid"}, {"type": "network"}, {"type": "ipc"},
      {"type": "uts"}, {"type": "mount"}
    ],
    "maskedPaths": [
      "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
      "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
      "/proc/sched_debug", "/sys/firmware", "/proc/scsi"
    ],
    "readonlyPaths": [
      "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
      "/proc/sysrq-trigger"
    ]
  }
}
`

// sleepBundle writes a bundle at dir running `sleep` on the rootfs of the
// bundle at from (same config otherwise), for containers to exec into.
func sleepBundle(from, dir string) error {
	data, err := os.ReadFile(filepath.Join(from, "config.json"))
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s/config.json: %w", from, err)
	}
	proc, _ := spec["process"].(map[string]any)
	root, _ := spec["root"].(map[string]any)
	if proc == nil || root == nil {
		return fmt.Errorf("%s/config.json: no process or root", from)
	}
	proc["args"] = []string{"sleep", "1000000"}
	if p, _ := root["path"].(string); !filepath.IsAbs(p) {
		root["path"] = filepath.Join(from, p)
	}
	if data, err = json.Marshal(spec); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644)
}
