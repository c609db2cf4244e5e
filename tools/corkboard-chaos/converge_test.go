//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"corkboard/persist/postgres/pgtest"
)

// The short converge runs of make test (docs/chaos.md, "The converge
// workload"): a few clients on a handful of notes, a bounded number of
// operations each, no faults but the clients' own offline windows. Each
// fails on a copy that differs from the server's or a typed line that is
// nowhere, naming the seed; CORKBOARD_CONVERGE_SEED replays a seed's
// choices (the timing of a real server is not replayed), CORKBOARD_BIN
// runs them against a corkboard binary built elsewhere.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// convergeBinary is $CORKBOARD_BIN when set (a server built elsewhere),
// else corkboard built once per test process (go test -count=20 runs the
// tests 20 times in one process).
func convergeBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CORKBOARD_BIN"); bin != "" {
		return bin
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "corkboard-converge-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath, binErr = buildCorkboard(context.Background(), dir)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// convergeSeed is CORKBOARD_CONVERGE_SEED, or a new seed.
func convergeSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("CORKBOARD_CONVERGE_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CORKBOARD_CONVERGE_SEED=%q: %v", s, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

func runConverge(t *testing.T, cfg ConvergeConfig) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the converge run starts real servers")
	}
	cfg.Corkboard = convergeBinary(t)
	cfg.Work = t.TempDir()
	cfg.Seed = convergeSeed(t)
	cfg.NodePoll = 500 * time.Millisecond
	cfg.Converge = 40 * time.Second
	cfg.Out = testWriter{t}
	res, err := RunConverge(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	t.Log(res.Summary)
	if len(res.Violations) > 0 {
		t.Fatalf("%d violations:\n%s\nreplay the choices: CORKBOARD_CONVERGE_SEED=%d go test -C tools -race -run '%s$' ./corkboard-chaos",
			len(res.Violations), res.Details, cfg.Seed, t.Name())
	}
	// RunConverge compared the server's merge counters with what the run
	// saw (CheckCounters); they must be there to compare.
	if _, ok := res.Metrics[metricMerged]; !ok {
		t.Fatalf("seed %d: the server has no merge counters (%s): %v", cfg.Seed, metricMerged, res.Metrics)
	}
}

// TestConvergeBolt: one node on bbolt, 3 live and 2 REST clients.
func TestConvergeBolt(t *testing.T) {
	runConverge(t, ConvergeConfig{Live: 3, REST: 2, Notes: 4, Ops: 60})
}

// TestConvergePG: three nodes on one PostgreSQL database, 3 live and 3
// REST clients spread over them.
func TestConvergePG(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	runConverge(t, ConvergeConfig{DSN: dsn, Nodes: 3, Live: 3, REST: 3, Notes: 4, Ops: 50})
}
