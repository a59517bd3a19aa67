package bootstrap

import (
	"bytes"
	"slices"
	"testing"
)

// The numbering the table gives: init's own fds follow the preserved
// ones, the fifo only for create, the extras after them in order, then
// (create only) the number of Go init's launcher channel.
func TestInitEnv(t *testing.T) {
	for _, tc := range []struct {
		first             int
		fifo, exec, debug bool
		extras            []string
		want              []string
	}{
		{FirstFd(0), true, false, false, nil, []string{EnvInitPipe + "=3", EnvLogPipe + "=4", EnvFifoFd + "=5", EnvLauncherFd + "=6"}},
		{FirstFd(2), true, false, true, []string{EnvConsoleFd, EnvListenerFd},
			[]string{EnvInitPipe + "=5", EnvLogPipe + "=6", EnvFifoFd + "=7", EnvConsoleFd + "=8", EnvListenerFd + "=9",
				EnvLauncherFd + "=10", EnvLogDebug + "=1"}},
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

func TestConfigPayload(t *testing.T) {
	p := ConfigPayload(ConfigAskHooks, []byte(`{"id":"x"}`))
	f, data, err := ParseConfigPayload(p)
	if err != nil || f != ConfigAskHooks || string(data) != `{"id":"x"}` {
		t.Errorf("round trip: %#x %q %v", f, data, err)
	}
	if _, _, err := ParseConfigPayload(nil); err == nil {
		t.Error("an empty CONFIG was taken")
	}
	if _, _, err := ParseConfigPayload([]byte{0x80, '{', '}'}); err == nil {
		t.Error("unknown flags were taken")
	}
}
