package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestCommitsTimesEveryPush: -mode commits makes rate × duration real
// commits and reports each one's time.
func TestCommitsTimesEveryPush(t *testing.T) {
	cfg := &Config{Mode: "commits", TempDir: t.TempDir(), Rate: 200, Duration: 100 * time.Millisecond, Email: "load@example.com"}
	rep := &Report{}
	if err := runCommits(context.Background(), cfg, rep, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	c := rep.Commits
	if c == nil || c.Commits != 20 {
		t.Fatalf("report %+v, want 20 commits", c)
	}
	if l := c.Latency; l.P50Ms <= 0 || l.MaxMs < l.P99Ms || l.P99Ms < l.P50Ms {
		t.Fatalf("latency %+v, want 0 < p50 ≤ p99 ≤ max", l)
	}
	var b strings.Builder
	printCommits(&b, c)
	if !strings.Contains(b.String(), "20 at 200/s") {
		t.Fatalf("printed %q", b.String())
	}
}

// TestCommitsFlags: the commits mode needs no server or login, and bounds
// its rate and duration.
func TestCommitsFlags(t *testing.T) {
	testModeFlags(t, "commits", []flagCase{
		{args: []string{"-rate", "10", "-duration", "20s"}},
		{args: []string{"-rate", "10000", "-duration", "1h"}},
		{args: []string{"-rate", "10001"}, want: "-rate above 0 and at most 10000"},
		{args: []string{"-rate", "0"}, want: "-rate above 0"},
		{args: []string{"-duration", "61m"}, want: "-duration above 0 and at most 1h"},
	})
}
