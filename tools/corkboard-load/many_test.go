package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"corkboard/persist/postgres/pgtest"
)

func TestWorkerStateApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  workerState
	}{
		{"opened", []string{"opened 7 3 1 4 6"},
			workerState{Opened: true, Local: 7, Remote: 3, Failed: 1, PerNode: []int{4, 6}}},
		{"opened again replaces the counts", []string{"opened 7 3 1 4 6", "opened 9 0 0 9"},
			workerState{Opened: true, Local: 9, PerNode: []int{9}}},
		{"settled", []string{"settled 120"}, workerState{Settled: true, Msgs: 120}},
		{"pushed, latest wins", []string{"pushed 1 0 100", "pushed 5 2 1700000000123456789"},
			workerState{PushedLocal: 5, PushedRemote: 2, LastPushNs: 1700000000123456789}},
		{"errors with a message", []string{"errors 2 live lt1-3: read hello: EOF"},
			workerState{Errors: 2, FirstError: "live lt1-3: read hello: EOF"}},
		{"no errors", []string{"errors 0 "}, workerState{}},
		{"done", []string{"done"}, workerState{Done: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w workerState
			for _, l := range tc.lines {
				if err := w.apply(l); err != nil {
					t.Fatalf("apply(%q): %v", l, err)
				}
			}
			got, _ := json.Marshal(w)
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Fatalf("state %s, want %s", got, want)
			}
		})
	}
}

func TestWorkerStateApplyRejects(t *testing.T) {
	for _, line := range []string{
		"",
		"hello 1",
		"opened 1 2",     // no failed count
		"opened 1 2 x",   // not a number
		"opened 1 -2 0",  // negative
		"settled",        // no count
		"settled 1 2",    // too many
		"pushed 1 2",     // no time
		"pushed 1 2 3 4", // too many
		"errors many EOF",
		"errors -1 x",
	} {
		var w workerState
		if err := w.apply(line); err == nil {
			t.Errorf("apply(%q) accepted", line)
		}
	}
}

func TestSumWorkers(t *testing.T) {
	ws := []*workerState{
		{Opened: true, Local: 10, Remote: 5, Failed: 1, PerNode: []int{8, 7}, Settled: true, Msgs: 30,
			PushedLocal: 10, PushedRemote: 4, LastPushNs: 500, Done: true, Exited: true},
		{Opened: true, Local: 6, Remote: 9, PerNode: []int{5, 10}, PushedLocal: 6, PushedRemote: 9, LastPushNs: 900,
			Errors: 2, FirstError: "second worker's"},
		{Errors: 1, FirstError: "third worker's", LastPushNs: 700},
	}
	got := sumWorkers(ws, 2)
	want := workerTotals{Workers: 3, Opened: 2, Settled: 1, Done: 1, Exited: 1, Local: 16, Remote: 14, Failed: 1,
		PerNode: []int{13, 17}, Msgs: 30, PushedLocal: 16, PushedRemote: 13, LastPushNs: 900, Errors: 3, FirstError: "second worker's"}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("totals %s\nwant   %s", g, w)
	}
	if got.Connected() != 30 || got.Pushed() != 29 {
		t.Fatalf("connected %d, pushed %d; want 30 and 29", got.Connected(), got.Pushed())
	}
	// A worker naming more nodes than the run has is not counted past them.
	if got := sumWorkers([]*workerState{{PerNode: []int{1, 2, 3}}}, 2); got.PerNode[0] != 1 || got.PerNode[1] != 2 || len(got.PerNode) != 2 {
		t.Fatalf("per node %v, want [1 2]", got.PerNode)
	}
}

func TestPlacement(t *testing.T) {
	for _, tc := range []struct {
		conns, perBoard, nodes int
		wantPerNode            []int
		wantRemote             int
	}{
		// 5,000 boards: 2,500 pairs, 834/833/833 homes; odd boards put 6 of
		// their 10 on the other two nodes.
		{50_000, 10, 3, []int{16_674, 16_663, 16_663}, 15_000},
		{19_500, 10, 1, []int{19_500}, 0},
		{40, 10, 2, []int{20, 20}, 10},
	} {
		perNode := connsPerNode(tc.conns, tc.perBoard, tc.nodes)
		if fmtInts(perNode) != fmtInts(tc.wantPerNode) {
			t.Errorf("%d over %d nodes: per node %v, want %v", tc.conns, tc.nodes, perNode, tc.wantPerNode)
		}
		remote := 0
		homes := map[int]map[int]bool{} // board → nodes holding it
		for i := range tc.conns {
			b, n := placeConn(i, tc.perBoard, tc.nodes)
			if b != i/tc.perBoard {
				t.Fatalf("connection %d on board %d", i, b)
			}
			if n != homeNode(b, tc.nodes) {
				remote++
			}
			if homes[b] == nil {
				homes[b] = map[int]bool{}
			}
			homes[b][n] = true
		}
		if remote != tc.wantRemote {
			t.Errorf("%d over %d nodes: %d remote, want %d", tc.conns, tc.nodes, remote, tc.wantRemote)
		}
		// Even boards live on one node; odd boards on every node (the bus
		// carries their pushes) as soon as there are several.
		for b, ns := range homes {
			want := 1
			if b%2 == 1 {
				want = min(tc.nodes, tc.perBoard)
			}
			if len(ns) != want {
				t.Fatalf("%d over %d nodes: board %d on %d nodes, want %d", tc.conns, tc.nodes, b, len(ns), want)
			}
		}
	}
}

func fmtInts(v []int) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSplitWorkers(t *testing.T) {
	first, count := splitWorkers(50_000, 4)
	if fmtInts(first) != "[0,12500,25000,37500]" || fmtInts(count) != "[12500,12500,12500,12500]" {
		t.Fatalf("first %v count %v", first, count)
	}
	first, count = splitWorkers(10, 3)
	if fmtInts(first) != "[0,3,6]" || fmtInts(count) != "[3,3,4]" {
		t.Fatalf("first %v count %v", first, count)
	}
	if got := (&manyFlags{}).workerCount(50_000); got != 4 {
		t.Fatalf("workers for 50,000: %d, want 4", got)
	}
	if got := (&manyFlags{workers: 7}).workerCount(50_000); got != 7 {
		t.Fatalf("-workers 7: %d", got)
	}
}

func TestMemoryNodesFlags(t *testing.T) {
	testModeFlags(t, "memory-nodes", []flagCase{
		{[]string{"-spawn-corkboard", "cb", "-nodes", "3", "-conns", "50000"}, ""},
		{[]string{"-spawn-corkboard", "cb", "-nodes", "1", "-conns", "5000", "-store", "postgres://postgres@127.0.0.1/x"}, ""},
		{[]string{"-conns", "5000"}, "-spawn-corkboard"},
		{[]string{"-spawn-corkboard", "cb", "-nodes", "0"}, "-nodes must be 1 to 16"},
		{[]string{"-spawn-corkboard", "cb", "-conns", "200001"}, "-conns must be 1 to 200000"},
		{[]string{"-spawn-corkboard", "cb", "-workers", "65"}, "-workers"},
		{[]string{"-spawn-corkboard", "cb", "-per-board", "0"}, "-per-board"},
		{[]string{"-spawn-corkboard", "cb", "-store", "postgres://db.example/x"}, "-store"},
		{[]string{"-spawn-corkboard", "cb", "-pg", "postgres://db.example/x"}, "only a loopback PostgreSQL"},
	})
}

// A worker against the real server: its lines, read back with apply, say
// how many connections it holds, and that each received the push.
func TestWorkerAgainstTheServer(t *testing.T) {
	url, outbox := startService(t)
	ctx := context.Background()
	a, err := newAPI(url, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.login(ctx, "load@example.com", outbox); err != nil {
		t.Fatal(err)
	}
	prefix := newPrefix()
	for b := range 3 {
		if err := a.claim(ctx, boardName(prefix, b)); err != nil {
			t.Fatal(err)
		}
	}
	// Connections 5 to 24, 10 per board: boards 0 (5 of them), 1 and 2.
	spec := workerSpec{Nodes: []string{url}, Session: a.session, Prefix: prefix, First: 5, Count: 20, PerBoard: 10,
		SourceAddrs: 2, DialConcurrency: 4, SettleMaxMs: time.Minute.Milliseconds()}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runWorker(ctx, inR, outW, slog.New(slog.DiscardHandler))
		outW.Close()
	}()
	line, _ := json.Marshal(spec)
	if _, err := inW.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(outR)
	var w workerState
	// until reads lines until cond holds.
	until := func(cond func() bool) {
		t.Helper()
		for !cond() {
			if !sc.Scan() {
				t.Fatalf("worker output ended (%v); state %+v", <-done, w)
			}
			if err := w.apply(sc.Text()); err != nil {
				t.Fatal(err)
			}
		}
	}
	until(func() bool { return w.Opened })
	if w.Local != 20 || w.Remote != 0 || w.Failed != 0 || fmtInts(w.PerNode) != "[20]" || w.Errors != 0 {
		t.Fatalf("opened: %+v, want 20 local on the one node", w)
	}
	io.WriteString(inW, "settle\n")
	until(func() bool { return w.Settled })
	for b := range 3 {
		body, _ := json.Marshal(notePush(marker{Seq: 1, SentNs: 1}))
		if _, err := a.do(ctx, "POST", "/api/boards/"+boardName(prefix, b)+"/sync", body, nil); err != nil {
			t.Fatal(err)
		}
	}
	until(func() bool { return w.PushedLocal == 20 })
	if w.PushedRemote != 0 || w.LastPushNs == 0 || w.Errors != 0 {
		t.Fatalf("pushed: %+v", w)
	}
	io.WriteString(inW, "stop\n")
	until(func() bool { return w.Done })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Closing the connections on "stop" is not an error.
	if w.Errors != 0 {
		t.Fatalf("errors after stop: %d %s", w.Errors, w.FirstError)
	}
}

// The whole mode on a small scale: two nodes on a fresh PostgreSQL
// database, two worker processes (this test binary, see TestMain), and
// every connection, on either node, gets the push.
func TestMemoryNodesMode(t *testing.T) {
	store := pgtest.NewDatabase(t)
	cfg := &Config{}
	fs := newFlagSet(cfg, io.Discard)
	if err := fs.Parse([]string{"-mode", "memory-nodes", "-spawn-corkboard", corkboardBin, "-tmp", t.TempDir(),
		"-nodes", "2", "-conns", "40", "-workers", "2", "-hold", "0s", "-store", store, "-pool-max-conns", "4", "-drain", "1m"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	rep, err := run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	mr := rep.MemoryNodes
	if mr.Connected != 40 || mr.Failed != 0 || mr.Errors != 0 || mr.RemoteConns != 10 || mr.Boards != 4 {
		t.Fatalf("held %d (remote %d), failed %d, errors %d (%s), boards %d; want 40 (remote 10), 0, 0, 4",
			mr.Connected, mr.RemoteConns, mr.Failed, mr.Errors, mr.FirstError, mr.Boards)
	}
	if len(mr.PerNode) != 2 || mr.PerNode[0].Connected != 20 || mr.PerNode[1].Connected != 20 {
		t.Fatalf("per node %+v, want 20 each", mr.PerNode)
	}
	for _, n := range mr.PerNode {
		if n.RSSHeld == 0 || n.Goroutines < n.Connected {
			t.Fatalf("%s: RSS %d, goroutines %d for %d connections", n.Node, n.RSSHeld, n.Goroutines, n.Connected)
		}
	}
	p := mr.Pushes
	if p == nil || p.Received != 40 || p.ReceivedRemote != 10 || p.Missing != 0 || p.Errors != 0 {
		t.Fatalf("pushes %+v, want all 40 received, 10 over the bus", p)
	}
}
