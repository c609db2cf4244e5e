package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median odd", ms(1, 2, 3), 50, 2 * time.Millisecond},
		// Nearest rank: ceil(0.5*4) = 2nd, a real sample, no interpolation.
		{"median even", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p100 is max", hundred, 100, 100 * time.Millisecond},
		{"p1 of 100", hundred, 1, 1 * time.Millisecond},
		{"tiny p is min", hundred, 0.001, 1 * time.Millisecond},
		// One slow delivery in 1000 is above p99 but is the max.
		{"p99 ignores a lone outlier", append(make([]time.Duration, 999), time.Second), 99, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("percentile(%v)=%v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	samples := []time.Duration{5 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}
	s := summarize(samples)
	want := Summary{Count: 5, P50Ms: 3, P90Ms: 5, P99Ms: 5, MaxMs: 5, MeanMs: 3}
	if s != want {
		t.Fatalf("summarize=%+v, want %+v", s, want)
	}
	if got := summarize(nil); got != (Summary{}) {
		t.Fatalf("summarize(nil)=%+v, want zero", got)
	}
	// Sub-millisecond latencies keep microsecond precision.
	if got, want := summarize([]time.Duration{1234567 * time.Nanosecond}).P50Ms, 1.235; got != want {
		t.Fatalf("P50Ms=%v, want %v", got, want)
	}
}
