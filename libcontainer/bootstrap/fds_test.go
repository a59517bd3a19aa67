package bootstrap

import (
	"bytes"
	"slices"
	"testing"
)

// The numbering the table gives: init's own fds follow the preserved
// ones, the fifo only for create, the extras after them in order.
func TestInitEnv(t *testing.T) {
	for _, tc := range []struct {
		first             int
		fifo, exec, debug bool
		extras            []string
		want              []string
	}{
		{FirstFd(0), true, false, false, nil, []string{EnvInitPipe + "=3", EnvLogPipe + "=4", EnvFifoFd + "=5"}},
		{FirstFd(2), true, false, true, []string{EnvConsoleFd, EnvListenerFd},
			[]string{EnvInitPipe + "=5", EnvLogPipe + "=6", EnvFifoFd + "=7", EnvConsoleFd + "=8", EnvListenerFd + "=9",
				EnvLogDebug + "=1"}},
		{FirstFd(0), false, true, false, []string{EnvConsoleFd},
			[]string{EnvInitPipe + "=3", EnvLogPipe + "=4", EnvConsoleFd + "=5", EnvInitType + "=" + InitTypeExec}},
	} {
		if got := InitEnv(tc.first, tc.fifo, tc.exec, tc.debug, tc.extras); !slices.Equal(got, tc.want) {
			t.Errorf("InitEnv(%d, fifo %v, exec %v, debug %v, %v) = %q, want %q", tc.first, tc.fifo, tc.exec, tc.debug, tc.extras, got, tc.want)
		}
	}
}

func TestSyncFrames(t *testing.T) {
	var b bytes.Buffer
	if err := Send(&b, SyncConfig, make([]byte, maxPayload+1)); err == nil || b.Len() != 0 {
		t.Errorf("an oversized frame: %v, %d bytes written", err, b.Len())
	}
	if err := Send(&b, SyncError, []byte("boom")); err != nil {
		t.Fatal(err)
	}
	if err := Send(&b, SyncReady, nil); err != nil {
		t.Fatal(err)
	}
	if typ, p, err := Recv(&b); typ != SyncError || string(p) != "boom" || err != nil {
		t.Errorf("first frame %s %q %v", typ, p, err)
	}
	if typ, p, err := Recv(&b); typ != SyncReady || len(p) != 0 || err != nil {
		t.Errorf("second frame %s %q %v", typ, p, err)
	}
	if _, _, err := Recv(&b); err == nil {
		t.Error("a read past the last frame succeeded")
	}
	if pid, err := ParsePid(PidPayload(123456)); pid != 123456 || err != nil {
		t.Errorf("pid round trip %d %v", pid, err)
	}
	for typ, name := range map[SyncType]string{SyncUsermapPls: "USERMAP_PLS", SyncCreateHooksDone: "CREATE_HOOKS_DONE", 42: "sync(42)"} {
		if typ.String() != name {
			t.Errorf("%d is %q, want %q", uint32(typ), typ, name)
		}
	}
}

func TestRootfsPayload(t *testing.T) {
	in := Rootfs{Flags: RootfsAskHooks | RootfsChroot, Mounts: []byte("plan"), Hooks: []byte("hooks"), Chroot: "/r"}
	b, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeRootfs(b)
	if err != nil || out.Flags != in.Flags || string(out.Mounts) != "plan" || string(out.Hooks) != "hooks" || out.Chroot != "/r" {
		t.Errorf("round trip: %+v %v", out, err)
	}
	for _, bad := range []Rootfs{{Flags: 0x80}, {Flags: RootfsChroot}, {Chroot: "/r"}, {Flags: RootfsChroot, Chroot: "/a\x00b"}} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("%+v was encoded", bad)
		}
	}
	if _, err := DecodeRootfs(b[:len(b)-1]); err == nil {
		t.Error("a short CONFIG was taken")
	}
	if _, err := DecodeRootfs(nil); err == nil {
		t.Error("an empty CONFIG was taken")
	}
}
