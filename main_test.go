package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]unix.Signal{
		"0": 0, "9": unix.SIGKILL, "KILL": unix.SIGKILL, "SIGKILL": unix.SIGKILL, "sigterm": unix.SIGTERM, "hup": unix.SIGHUP, "USR1": unix.SIGUSR1,
	} {
		if got, err := parseSignal(in); err != nil || got != want {
			t.Errorf("parseSignal(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"65", "-1", "NOPE", ""} {
		if _, err := parseSignal(bad); err == nil {
			t.Errorf("parseSignal(%q) accepted", bad)
		}
	}
}
