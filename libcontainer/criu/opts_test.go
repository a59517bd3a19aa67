package criu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkpoint-restore/go-criu/v7/rpc"
	"golang.org/x/sys/unix"
)

// Every bad flag value is refused, naming the flag and the value.
func TestCheckNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{}, "--image-path: must not be empty"},
		{Options{ImagePath: dir, ManageCgroups: "hard", StatusFd: -1}, `--manage-cgroups-mode "hard"`},
		{Options{ImagePath: dir, EmptyNs: []string{"ipc"}, StatusFd: -1}, `--empty-ns "ipc"`},
		{Options{ImagePath: dir, PageServer: "host", StatusFd: -1}, `--page-server "host": not ADDRESS:PORT`},
		{Options{ImagePath: dir, PageServer: ":80", StatusFd: -1}, `--page-server ":80"`},
		{Options{ImagePath: dir, PageServer: "h:0", StatusFd: -1}, `port "0" is not 1-65535`},
		{Options{ImagePath: dir, PageServer: "h:65536", StatusFd: -1}, `port "65536"`},
		{Options{ImagePath: dir, StatusFd: 1}, "--status-fd 1: only with --lazy-pages"},
		{Options{ImagePath: dir, StatusFd: 999, LazyPages: true}, "--status-fd 999: bad file descriptor"},
	} {
		err := tc.o.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	ok := Options{ImagePath: dir, ManageCgroups: "ignore", EmptyNs: []string{"network"}, PageServer: "10.0.0.1:27", StatusFd: -1}
	if err := ok.Check(); err != nil {
		t.Errorf("good options refused: %v", err)
	}
}

// A read-only --status-fd cannot carry CRIU's \0.
func TestStatusFdMustBeWritable(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	o := Options{ImagePath: "/x", LazyPages: true, StatusFd: int(r.Fd())}
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "not open for writing") {
		t.Errorf("read end: %v", err)
	}
	o.StatusFd = int(w.Fd())
	if err := o.Check(); err != nil {
		t.Errorf("write end: %v", err)
	}
}

func TestCheckParent(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "pre"), 0o700)
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	for parent, want := range map[string]string{
		"":           "",
		"pre":        "",
		"/abs/pre":   "--parent-path /abs/pre: must be relative",
		"missing":    "--parent-path missing",
		"file":       "not a directory",
		"../nothere": "--parent-path ../nothere",
	} {
		err := (&Options{ImagePath: dir, ParentPath: parent}).CheckParent()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--parent-path %q: %v, want %q", parent, err, want)
		}
	}
}

// The annotation names CRIU's config file; empty, none; absent, runc's.
func TestConfigFile(t *testing.T) {
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := &Options{ImagePath: f.Name()}
	for _, tc := range []struct {
		ann  map[string]string
		want *string
	}{
		{nil, ptr(DefaultConfigFile)},
		{map[string]string{ConfigAnnotation: "/etc/criu/mine.conf"}, ptr("/etc/criu/mine.conf")},
		{map[string]string{ConfigAnnotation: ""}, nil},
	} {
		got := o.RPC(f, nil, "dump.log", tc.ann).ConfigFile
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%v: config file %v, want %v", tc.ann, deref(got), deref(tc.want))
		}
	}
}

func TestRPCOptions(t *testing.T) {
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := &Options{ImagePath: f.Name(), ManageCgroups: "ignore", ParentPath: "../pre", PageServer: "10.0.0.1:27", TCPEstablished: true}
	mine := o.RPC(f, nil, "dump.log", nil)
	o.DumpRPC(mine)
	opts := viaGoCriu(t, mine)
	if opts.GetManageCgroupsMode() != rpc.CriuCgMode_IGNORE || opts.GetEmptyNs() != unix.CLONE_NEWNET ||
		opts.GetParentImg() != "../pre" || !opts.GetTrackMem() || opts.GetPs().GetPort() != 27 ||
		!opts.GetTcpEstablished() || !opts.GetOrphanPtsMaster() || opts.GetImagesDirFd() != int32(f.Fd()) {
		t.Errorf("dump options: %v", opts)
	}
	if opts.WorkDirFd != nil {
		t.Errorf("work dir fd set without --work-path")
	}
	mine = (&Options{}).RPC(f, nil, "restore.log", nil)
	(&Options{LsmProfile: "selinux:x"}).RestoreRPC(mine)
	opts = viaGoCriu(t, mine)
	if !opts.GetRstSibling() || opts.GetLsmProfile() != "selinux:x" || opts.GetManageCgroupsMode() != rpc.CriuCgMode_SOFT {
		t.Errorf("restore options: %v", opts)
	}
}

func TestFindBinary(t *testing.T) {
	if _, err := FindBinary("/nonexistent/criu"); err == nil || !strings.Contains(err.Error(), `criu binary "/nonexistent/criu"`) {
		t.Errorf("missing binary: %v", err)
	}
}

func TestLogErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dump.log")
	os.WriteFile(p, []byte("(0.1) fine\n(0.2) before\n(0.3) Error (x.c:1): it broke\n(0.4) Error (y.c:2): Dumping FAILED.\n"), 0o600)
	got := LogErrors(p, 6)
	want := []string{"(0.2) before", "(0.3) Error (x.c:1): it broke", "(0.4) Error (y.c:2): Dumping FAILED."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("LogErrors: %q, want %q", got, want)
	}
	if LogErrors(filepath.Join(t.TempDir(), "none"), 6) != nil {
		t.Error("a missing log gave lines")
	}
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
