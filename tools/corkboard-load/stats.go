package main

import (
	"math"
	"slices"
	"time"
)

// Summary is a latency distribution. Durations are in milliseconds so that
// the JSON reads without a unit table.
type Summary struct {
	Count  int     `json:"count"`
	P50Ms  float64 `json:"p50Ms"`
	P90Ms  float64 `json:"p90Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MaxMs  float64 `json:"maxMs"`
	MeanMs float64 `json:"meanMs"`
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// sorted samples: the smallest sample with at least p% of the samples at or
// below it. It is 0 for no samples. Nearest rank, not interpolation, so a
// reported p99 is a latency some delivery really had.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// summarize sorts samples in place and describes them.
func summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return Summary{
		Count:  len(samples),
		P50Ms:  ms(percentile(samples, 50)),
		P90Ms:  ms(percentile(samples, 90)),
		P99Ms:  ms(percentile(samples, 99)),
		MaxMs:  ms(samples[len(samples)-1]),
		MeanMs: ms(sum / time.Duration(len(samples))),
	}
}

// ms converts to milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
