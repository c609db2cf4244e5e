//go:build unix

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"corkboard/persist/postgres/pgtest"
)

// TestChaosShort is the short chaos run of make test: 3 real nodes on a
// fresh database, 30 pushers and 10 watchers, 30 s of faults of every kind
// but a PostgreSQL restart (go test runs packages in parallel, and other
// packages' tests use the same server). Shorter SIGSTOPs than the long
// run's. It fails on any violation the checker finds; the waits after the
// faults are bounded (60 s each) but long enough for a loaded machine,
// and nothing is asserted about time.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the chaos run takes about a minute")
	}
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	work := t.TempDir()
	bin, err := buildCorkboard(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	res, err := Run(ctx, Config{
		Corkboard: bin, DSN: dsn, Work: work, Seed: seed,
		Nodes: 3, Boards: 3, Pushers: 30, Watchers: 10,
		Duration: 30 * time.Second, FaultEvery: 3 * time.Second,
		StopMin: 2 * time.Second, StopMax: 4 * time.Second,
		NodePoll: 500 * time.Millisecond, Converge: 60 * time.Second,
		Out: testWriter{t},
	})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	t.Log(res.Summary)
	for _, k := range []string{faultKill, faultStop, faultTerminate} {
		if res.Faults[k] == 0 {
			t.Errorf("seed %d: no %s fault was injected", seed, k)
		}
	}
	if len(res.Violations) > 0 {
		t.Fatalf("seed %d (reproduce the schedule: go run -C tools ./corkboard-chaos -seed %d -duration 30s -fault-every 3s -stop-min 2s -stop-max 4s): %d violations:\n%s",
			seed, seed, len(res.Violations), res.Summary)
	}
}

// testWriter sends the run's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
