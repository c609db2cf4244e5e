package main

import (
	"strings"
	"testing"
)

func TestNodesFlags(t *testing.T) {
	testModeFlags(t, "nodes", []flagCase{
		{[]string{"-spawn-corkboard", "cb"}, ""},
		{[]string{"-spawn-corkboard", "cb", "-nodes", "16", "-rounds", "10", "-push-boards", "2", "-nodes-part", "fanout"}, ""},
		{nil, "-spawn-corkboard"},
		{[]string{"-spawn-corkboard", "cb", "-nodes", "1"}, "-nodes must be 2 to 16"},
		{[]string{"-spawn-corkboard", "cb", "-nodes", "17"}, "-nodes must be 2 to 16"},
		{[]string{"-spawn-corkboard", "cb", "-rounds", "0"}, "-rounds"},
		{[]string{"-spawn-corkboard", "cb", "-push-boards", "1"}, "-push-boards must be 2"},
		{[]string{"-spawn-corkboard", "cb", "-pool-max-conns", "101"}, "-pool-max-conns"},
		{[]string{"-spawn-corkboard", "cb", "-nodes-part", "both"}, "-nodes-part"},
		{[]string{"-spawn-corkboard", "cb", "-duration", "500ms"}, "-duration"},
		{[]string{"-spawn-corkboard", "cb", "-rate", "0"}, "-rate"},
		{[]string{"-spawn-corkboard", "cb", "-pg", "postgres://postgres@db.example/postgres"}, "only a loopback PostgreSQL"},
		{[]string{"-spawn-corkboard", "cb", "-pg", "mysql://127.0.0.1/x"}, "postgres://"},
	})
}

func TestPgURLs(t *testing.T) {
	d, err := pgURLs("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "corkboard_load_lt01", 16)
	if err != nil {
		t.Fatal(err)
	}
	if d.Plain != "postgres://postgres@127.0.0.1:5432/corkboard_load_lt01?sslmode=disable" {
		t.Errorf("plain %s", d.Plain)
	}
	if d.Node != "postgres://postgres@127.0.0.1:5432/corkboard_load_lt01?pool_max_conns=16&sslmode=disable" {
		t.Errorf("node %s", d.Node)
	}
	// The name is pasted into CREATE DATABASE.
	if _, err := pgURLs("postgres://127.0.0.1/postgres", "x; DROP DATABASE postgres", 4); err == nil {
		t.Error("a database name with SQL in it was accepted")
	}
}

func TestParsePgbench(t *testing.T) {
	out := []byte(`pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: push.sql
number of transactions actually processed: 31254
latency average = 3.834 ms
initial connection time = 12.345 ms
tps = 2086.412345 (without initial connection time)
`)
	tps, avg, err := parsePgbench(out)
	if err != nil || tps != 2086.412345 || avg != 3.834 {
		t.Errorf("tps %v avg %v err %v", tps, avg, err)
	}
	if _, _, err := parsePgbench([]byte("pgbench: error: connection to server failed\n")); err == nil {
		t.Error("output without tps was accepted")
	}
}

func TestNodesReport(t *testing.T) {
	n := &NodesResult{Nodes: 3, Pushers: 8,
		Ceiling: []PgbenchRun{{Round: 1, Boards: 1, TPS: 800}, {Round: 1, Boards: 1000, TPS: 2000}, {Round: 2, Boards: 1, TPS: 400}},
		Phases: []NodesPhase{
			{Round: 1, Nodes: 1, Boards: 1, PushesPerS: 400},
			{Round: 1, Nodes: 3, Boards: 1000, PushesPerS: 1500},
			{Round: 2, Nodes: 3, Boards: 1, PushesPerS: 300, Retries: 1},
			{Round: 2, Nodes: 3, Boards: 1000, PushesPerS: 900}, // no ceiling in round 2
		},
		FanOut: &FanOutCompare{Pushes: 750, Same: Summary{P50Ms: 2, P99Ms: 20}, Other: Summary{P50Ms: 3, P99Ms: 30}, P50Ratio: 1.5, P99Ratio: 1.5},
	}
	n.ofCeiling()
	for i, want := range []float64{0.5, 0.75, 0.75, 0} {
		if got := n.Phases[i].OfCeiling; got != want {
			t.Errorf("phase %d: of ceiling %v, want %v", i, got, want)
		}
	}
	var b strings.Builder
	printNodes(&b, n)
	for _, want := range []string{"pgbench ceiling      1000 board(s)     2000.0 tps", "1500.0 pushes/s", "of ceiling 0.75", "of ceiling -", "of ceiling 0.75  errors 0  (after 1 failed tries)", "other ÷ same: p50 1.50×, p99 1.50×"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
