package initproc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sirupsen/logrus"
)

// Init's log lines are one JSON object each, with the level and the
// message the parent re-logs, whatever the message holds.
func TestLineFormatter(t *testing.T) {
	for _, lvl := range []logrus.Level{logrus.DebugLevel, logrus.WarnLevel, logrus.ErrorLevel} {
		msg := "execve \"/bin/true\"\nnext <line> & \x01 é"
		line, err := lineFormatter{}.Format(&logrus.Entry{Level: lvl, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Errorf("not one line: %q", line)
		}
		var e struct{ Level, Msg string }
		if err := json.Unmarshal(line, &e); err != nil || e.Level != lvl.String() || e.Msg != msg {
			t.Errorf("%q: %+v, %v", line, e, err)
		}
	}
	// The parent skips debug lines by this prefix unless --debug is on.
	line, _ := lineFormatter{}.Format(&logrus.Entry{Level: logrus.DebugLevel, Message: "x"})
	if !bytes.HasPrefix(line, []byte(`{"level":"debug"`)) {
		t.Errorf("debug line %q", line)
	}
}
