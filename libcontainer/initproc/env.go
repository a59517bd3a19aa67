package initproc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// processEnv is the process's environment as runc makes it: a key given
// more than once keeps its last value, in the place of that last one;
// HOME, when missing or empty, is the user's home from the container's
// /etc/passwd. Every key appears once.
func processEnv(p *configs.Process) []string {
	env := dedupEnv(p.Env)
	for i, kv := range env {
		if kv == "HOME=" {
			env[i] = "HOME=" + homeOf(p.User.UID)
			return env
		}
	}
	if lookupEnv(env, "HOME") == "" {
		env = append(env, "HOME="+homeOf(p.User.UID))
	}
	return env
}

// dedupEnv keeps the last NAME=VALUE of each name, in order.
func dedupEnv(in []string) []string { return configs.DedupEnv(in) }

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// homeOf reads uid's home from /etc/passwd (inside the container: init
// has pivoted already); "/" when there is none.
func homeOf(uid uint32) string {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return "/"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 6 && fields[2] == strconv.FormatUint(uint64(uid), 10) && fields[5] != "" {
			return fields[5]
		}
	}
	return "/"
}

// lookPath finds the process's binary the way a shell would, with the
// container's PATH, as the process's user.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", fmt.Errorf("exec: %q: %w", name, err)
		}
		return name, nil
	}
	path := lookupEnv(env, "PATH")
	if path == "" {
		path = defaultPath
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, name)
		if executable(candidate) == nil {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

// executable checks that path is a file the process may execute. It asks
// with the effective ids and capabilities (AT_EACCESS), as execve will:
// a user with CAP_DAC_OVERRIDE may run a binary it cannot read.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("is a directory")
	}
	err = unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// faccessat2 refused by the container's seccomp profile: let
		// execve decide.
		return nil
	}
	return err
}
