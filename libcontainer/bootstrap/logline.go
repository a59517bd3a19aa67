package bootstrap

// #include "bootstrap.h"
import "C"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// LogLine is one line init writes on the log pipe (bootstrap.h,
// HUSK_LOG_LINE_*): the launcher's husk_logf.
type LogLine struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
}

// logDebugHead is how a debug line begins: HUSK_LOG_LINE_HEAD with the
// level filled in.
var logDebugHead = []byte(strings.Replace(C.HUSK_LOG_LINE_HEAD, "%s", "debug", 1))

// IsDebugLogLine says whether line is a debug line, without decoding it.
func IsDebugLogLine(line []byte) bool {
	return bytes.HasPrefix(line, logDebugHead[:bytes.IndexByte(logDebugHead, ',')])
}

// ParseLogLine decodes one line of the log pipe.
func ParseLogLine(line []byte) (LogLine, error) {
	var l LogLine
	if err := json.Unmarshal(line, &l); err != nil {
		return LogLine{}, fmt.Errorf("init's log line %q: %w", line, err)
	}
	return l, nil
}
