package main

import (
	"strings"
	"testing"
	"time"
)

// TestParseGCTrace reads the runtime's gctrace lines and nothing else: the
// start of each collection on the process's clock, its stop-the-world
// pauses, its mark phase and its assists.
func TestParseGCTrace(t *testing.T) {
	launched := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	log := strings.Join([]string{
		`time=2026-11-27T10:00:00Z level=INFO msg="corkboard listening"`,
		`gc 1 @0.012s 3%: 0.015+1.2+0.025 ms clock, 0.030+0.50/1.1/0+0.050 ms cpu, 4->4->2 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P`,
		`gc 2 @12.500s 1%: 2.0+40+3.0 ms clock, 4.0+12.5/20/0+6.0 ms cpu, 60->62->30 MB, 64 MB goal, 0 MB stacks, 0 MB globals, 2 P`,
		`gc x @1s: not a collection`,
		`scvg: 1 MB released`,
	}, "\n")
	evs := parseGCTrace(strings.NewReader(log), launched)
	if got, want := len(evs), 2; got != want {
		t.Fatalf("%d collections, want %d: %+v", got, want, evs)
	}
	e := evs[1]
	if got, want := e.at, launched.Add(12500*time.Millisecond); !got.Equal(want) {
		t.Fatalf("at=%v, want %v", got, want)
	}
	if e.stw != 5*time.Millisecond || e.mark != 40*time.Millisecond || e.assistCPU != 12500*time.Microsecond {
		t.Fatalf("stw %v, mark %v, assist %v; want 5ms, 40ms, 12.5ms", e.stw, e.mark, e.assistCPU)
	}
}

// FuzzParseGCTrace: any log reads without a panic, and every collection
// read starts no earlier than the launch.
func FuzzParseGCTrace(f *testing.F) {
	f.Add("gc 2 @12.500s 1%: 2.0+40+3.0 ms clock, 4.0+12.5/20/0+6.0 ms cpu, 60->62->30 MB")
	f.Add("gc 1 @-1s 0%: 1+1+1 ms clock, x")
	launched := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, log string) {
		for _, e := range parseGCTrace(strings.NewReader(log), launched) {
			if e.at.Before(launched) {
				t.Fatalf("a collection at %v, before the launch", e.at)
			}
		}
	})
}
