package main

import (
	"testing"
	"time"
)

func TestMedianAndQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		name         string
		in           []time.Duration
		median, p90  time.Duration
		min, maximum time.Duration
	}{
		{"empty", nil, 0, 0, 0, 0},
		{"one", ms(5), 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond},
		{"odd unsorted", ms(3, 1, 2), 2 * time.Millisecond, 3 * time.Millisecond, time.Millisecond, 3 * time.Millisecond},
		{"even", ms(4, 1, 3, 2), 2500 * time.Microsecond, 4 * time.Millisecond, time.Millisecond, 4 * time.Millisecond},
		{"ten", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 5500 * time.Microsecond, 9 * time.Millisecond, time.Millisecond, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.median {
				t.Errorf("median = %v, want %v", got, tt.median)
			}
			if got := quantile(tt.in, 0.9); got != tt.p90 {
				t.Errorf("p90 = %v, want %v", got, tt.p90)
			}
			if got := quantile(tt.in, 0); got != tt.min {
				t.Errorf("min = %v, want %v", got, tt.min)
			}
			if got := quantile(tt.in, 1); got != tt.maximum {
				t.Errorf("max = %v, want %v", got, tt.maximum)
			}
		})
	}
}
