package initproc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/husk-runtime/husk/libcontainer/configs"
	"golang.org/x/sys/unix"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// processEnv is the process's environment, with HOME filled in from the
// container's /etc/passwd when the config does not set it.
func processEnv(p *configs.Process) []string {
	env := append([]string(nil), p.Env...)
	if lookupEnv(env, "HOME") == "" {
		env = append(env, "HOME="+homeOf(p.User.UID))
	}
	return env
}

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

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("is a directory")
	}
	return unix.Access(path, unix.X_OK)
}
