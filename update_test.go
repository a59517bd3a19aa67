package main

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1024", 1024}, {"-1", -1}, {"512k", 512 << 10}, {"32m", 32 << 20}, {"32M", 32 << 20},
		{"32MiB", 32 << 20}, {"32mb", 32 << 20}, {"1g", 1 << 30}, {"2T", 2 << 40}, {"0", 0},
	} {
		if got, err := parseSize(tc.in); got != tc.want || err != nil {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "lots", "-2", "1x", "m", "99999999999t"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}
