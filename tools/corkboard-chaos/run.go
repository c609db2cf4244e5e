//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Config is one chaos run.
type Config struct {
	Corkboard string // the corkboard binary
	DSN       string // the (fresh) database the nodes share
	Work      string // a folder for the nodes' data
	Seed      uint64
	Nodes     int
	Boards    int
	Pushers   int
	Watchers  int
	// Duration is how long the clients push and the faults go on.
	Duration time.Duration
	// FaultEvery is the mean pause between two faults.
	FaultEvery time.Duration
	// StopMin and StopMax bound a SIGSTOP's length.
	StopMin, StopMax time.Duration
	// PGRestart adds PostgreSQL restarts (pg_ctlcluster, as root) to the faults.
	PGRestart bool
	// PGCluster is pg_ctlcluster's version and name, e.g. "15 main".
	PGCluster string
	NodePoll  time.Duration
	// Converge bounds each wait after the faults: pushes in flight, clients
	// catching up, a node restarting.
	Converge time.Duration
	Out      io.Writer
}

// Fault kinds.
const (
	faultKill      = "kill -9 + restart"
	faultStop      = "SIGSTOP + SIGCONT"
	faultTerminate = "pg_terminate_backend"
	faultPGRestart = "PostgreSQL restart"
)

// Result is what a run found.
type Result struct {
	Summary    string
	Violations []Violation
	// Faults counts the faults injected, by kind.
	Faults map[string]int
}

// Run runs the cluster, the clients and the faults, then the checker. An
// error means the run itself could not be carried out (a node would not
// start); violations are in the result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	out := cfg.Out
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x636861))
	fmt.Fprintf(out, "chaos: seed %d, %d nodes, %d boards, %d pushers, %d watchers, %s of faults\n",
		cfg.Seed, cfg.Nodes, cfg.Boards, cfg.Pushers, cfg.Watchers, cfg.Duration)

	var nodes []*node
	defer func() {
		for _, n := range nodes {
			n.shutdown()
		}
	}()
	for i := range cfg.Nodes {
		n, err := newNode(i, cfg.Corkboard, cfg.Work, cfg.DSN, cfg.NodePoll)
		if err != nil {
			return Result{}, err
		}
		nodes = append(nodes, n)
		if err := n.start(ctx, cfg.Converge); err != nil {
			return Result{}, err
		}
	}
	st := &stats{}
	e := &env{nodes: nodes, st: st, http: &http.Client{Timeout: 3 * time.Second}}

	// Setup, with every node up: one owner per board, invitees on the pro
	// plan (so they may edit), every session on one node's outbox.
	runID := fmt.Sprintf("r%d", cfg.Seed)
	boards := make([]string, cfg.Boards)
	owners := make([]session, cfg.Boards)
	for b := range boards {
		boards[b] = fmt.Sprintf("chaos-%d", b)
		s, err := login(ctx, nodes[b%len(nodes)], fmt.Sprintf("owner%d@chaos.test", b))
		if err != nil {
			return Result{}, err
		}
		owners[b] = s
		if _, err := call(ctx, e.http, "POST", nodes[b%len(nodes)].base()+"/api/boards/"+boards[b]+"/access", s.cookie, nil, nil); err != nil {
			return Result{}, fmt.Errorf("claim %s: %w", boards[b], err)
		}
	}
	invitees := cfg.Pushers + cfg.Watchers
	sessions := make([]session, invitees)
	for i := range sessions {
		email := fmt.Sprintf("user%02d@chaos.test", i)
		n := nodes[i%len(nodes)]
		s, err := login(ctx, n, email)
		if err != nil {
			return Result{}, err
		}
		sessions[i] = s
		b := i % cfg.Boards
		if _, err := call(ctx, e.http, "POST", nodes[b%len(nodes)].base()+"/api/boards/"+boards[b]+"/invite", owners[b].cookie, map[string]string{"email": email}, nil); err != nil {
			return Result{}, fmt.Errorf("invite %s: %w", email, err)
		}
		plan := exec.CommandContext(ctx, cfg.Corkboard, "plan", "set", email, "pro", "-store", cfg.DSN, "-data", n.data)
		if o, err := plan.CombinedOutput(); err != nil {
			return Result{}, fmt.Errorf("plan set %s: %w: %s", email, err, o)
		}
	}
	// The plan is cached up to -cache-ttl: wait until every pusher may edit.
	for i := 0; i < cfg.Pushers; i++ {
		b := boards[i%cfg.Boards]
		deadline := time.Now().Add(cfg.Converge)
		for {
			var acc struct{ CanEdit bool }
			_, err := call(ctx, e.http, "GET", nodes[i%len(nodes)].base()+"/api/boards/"+b+"/access", sessions[i].cookie, nil, &acc)
			if err == nil && acc.CanEdit {
				break
			}
			if time.Now().After(deadline) {
				return Result{}, fmt.Errorf("user%02d cannot edit %s after %s (%v)", i, b, cfg.Converge, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	hard, cancelHard := context.WithCancel(ctx)
	defer cancelHard()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	pushers := make([]*pusher, cfg.Pushers)
	for i := range pushers {
		p := &pusher{id: i, board: boards[i%cfg.Boards], sess: sessions[i], rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i+1))),
			copy: Copy{Name: fmt.Sprintf("pusher %d", i), Board: boards[i%cfg.Boards], Rows: map[string]Row{}}}
		pushers[i] = p
		wg.Add(1)
		go func() { defer wg.Done(); p.run(hard, stop, e, runID) }()
	}
	watchers := make([]*watcher, cfg.Watchers)
	var wwg sync.WaitGroup
	for i := range watchers {
		j := cfg.Pushers + i
		w := &watcher{name: fmt.Sprintf("watcher %d", i), board: boards[j%cfg.Boards], sess: sessions[j], home: nodes[i%len(nodes)],
			rng:  rand.New(rand.NewPCG(cfg.Seed, uint64(1000+i))),
			copy: Copy{Name: fmt.Sprintf("watcher %d", i), Board: boards[j%cfg.Boards], Rows: map[string]Row{}}}
		w.target.Store(-1)
		watchers[i] = w
		wwg.Add(1)
		go func() { defer wwg.Done(); w.run(hard, e) }()
	}

	// Faults, one at a time, each kind in turn in a seeded order.
	kinds := []string{faultKill, faultStop, faultTerminate}
	if cfg.PGRestart {
		kinds = append(kinds, faultPGRestart)
	}
	faults := map[string]int{}
	var faultLog []string
	start := time.Now()
	var order []string
	for time.Since(start) < cfg.Duration {
		pause := cfg.FaultEvery/2 + time.Duration(rng.Int64N(int64(cfg.FaultEvery)))
		if err := sleep(ctx, min(pause, cfg.Duration-time.Since(start))); err != nil {
			return Result{}, err
		}
		if time.Since(start) >= cfg.Duration {
			break
		}
		if len(order) == 0 {
			order = append([]string(nil), kinds...)
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		kind := order[0]
		order = order[1:]
		n := nodes[rng.IntN(len(nodes))]
		at := time.Since(start)
		desc, err := inject(ctx, cfg, rng, kind, n)
		if err != nil {
			return Result{}, fmt.Errorf("fault %s: %w", kind, err)
		}
		faults[kind]++
		faultLog = append(faultLog, fmt.Sprintf("%6.1fs %s", at.Seconds(), desc))
		fmt.Fprintf(out, "chaos: %s\n", faultLog[len(faultLog)-1])
	}

	// The end: no new pushes; the ones in flight finish (every node is up).
	close(stop)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(cfg.Converge):
		cancelHard() // pushes still unacknowledged stay unknown
		<-done
	}
	final, err := readFinal(ctx, cfg.DSN, boards)
	if err != nil {
		return Result{}, err
	}
	versions := map[string]int64{}
	for _, b := range final {
		versions[b.ID] = b.Version
	}
	for _, w := range watchers {
		w.target.Store(versions[w.board])
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.Converge)
	defer cancel()
	for _, p := range pushers {
		wg.Add(1)
		go func() { defer wg.Done(); p.catchUp(cctx, e, versions[p.board]) }()
	}
	wg.Wait()
	wdone := make(chan struct{})
	go func() { wwg.Wait(); close(wdone) }()
	select {
	case <-wdone:
	case <-cctx.Done():
		cancelHard()
		<-wdone
	}

	h := History{Boards: final}
	for _, p := range pushers {
		h.Pushes = append(h.Pushes, p.pushes...)
		h.Pulls = append(h.Pulls, p.pulls...)
		h.Copies = append(h.Copies, p.copy)
	}
	for _, w := range watchers {
		h.Watchers = append(h.Watchers, WatcherLog{Name: w.name, Board: w.board, Events: w.events})
		h.Copies = append(h.Copies, w.copy)
	}
	// A full pull of every board from every node, by its owner.
	for _, n := range nodes {
		for b, id := range boards {
			c := Copy{Name: fmt.Sprintf("full pull from node %d", n.i), Board: id, Rows: map[string]Row{}}
			var ch changes
			if _, err := call(cctx, &http.Client{Timeout: 30 * time.Second}, "GET", n.base()+"/api/boards/"+id+"/sync?since=0", owners[b].cookie, nil, &ch); err != nil {
				c.Err = err.Error()
			} else {
				c.apply(&ch)
				c.Version = ch.ServerVersion
			}
			h.Copies = append(h.Copies, c)
		}
	}
	vs := Check(h)

	var sb strings.Builder
	var acked, unknown int
	for _, p := range h.Pushes {
		if p.Acked {
			acked++
		} else {
			unknown++
		}
	}
	fmt.Fprintf(&sb, "chaos summary (seed %d, %s of faults, %s in all)\n", cfg.Seed, cfg.Duration, time.Since(start).Round(time.Second))
	fmt.Fprintf(&sb, "  pushes: %d made, %d acknowledged, %d never acknowledged, %d retries, %d answered as replays\n",
		len(h.Pushes), acked, unknown, st.retries.Load(), st.replays.Load())
	fmt.Fprintf(&sb, "  pulls by pushers: %d\n", st.pulls.Load())
	fmt.Fprintf(&sb, "  faults:")
	for _, k := range []string{faultKill, faultStop, faultTerminate, faultPGRestart} {
		fmt.Fprintf(&sb, " %s %d;", k, faults[k])
	}
	fmt.Fprintf(&sb, "\n  watchers: %d connections (%d reconnects), %d gaps seen (reconnected)\n",
		st.watcherConns.Load(), st.watcherConns.Load()-int64(cfg.Watchers), st.watcherGaps.Load())
	for _, g := range st.gaps {
		fmt.Fprintf(&sb, "    gap: %s\n", g)
	}
	fmt.Fprintf(&sb, "  versions per board:")
	for _, b := range final {
		fmt.Fprintf(&sb, " %s=%d", b.ID, b.Version)
	}
	fmt.Fprintf(&sb, "\n  copies compared: %d (pushers, watchers, full pulls of %d nodes)\n", len(h.Copies), len(nodes))
	fmt.Fprintf(&sb, "  violations: %d\n", len(vs))
	byCheck := map[string]int{}
	for _, v := range vs {
		byCheck[v.Check]++
	}
	checks := make([]string, 0, len(byCheck))
	for c := range byCheck {
		checks = append(checks, c)
	}
	sort.Strings(checks)
	for _, c := range checks {
		fmt.Fprintf(&sb, "    %s: %d\n", c, byCheck[c])
	}
	for i, v := range vs {
		if i == 20 {
			fmt.Fprintf(&sb, "    … %d more\n", len(vs)-20)
			break
		}
		fmt.Fprintf(&sb, "    - %s\n", v)
	}
	return Result{Summary: sb.String(), Violations: vs, Faults: faults}, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// inject applies one fault and returns its description; it returns once
// the fault is over (the node restarted or resumed, the database back).
func inject(ctx context.Context, cfg Config, rng *rand.Rand, kind string, n *node) (string, error) {
	switch kind {
	case faultKill:
		if err := n.kill(); err != nil {
			return "", err
		}
		down := time.Duration(200+rng.IntN(1500)) * time.Millisecond
		if err := sleep(ctx, down); err != nil {
			return "", err
		}
		if err := n.start(ctx, cfg.Converge); err != nil {
			return "", err
		}
		return fmt.Sprintf("kill -9 node %d, restarted after %s", n.i, down), nil
	case faultStop:
		d := cfg.StopMin + time.Duration(rng.Int64N(int64(cfg.StopMax-cfg.StopMin)+1))
		if err := n.signal(syscall.SIGSTOP); err != nil {
			return "", err
		}
		err := sleep(ctx, d)
		if cerr := n.signal(syscall.SIGCONT); cerr != nil {
			return "", cerr
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("SIGSTOP node %d for %s", n.i, d.Round(time.Millisecond)), nil
	case faultTerminate:
		k, err := terminateBackends(ctx, cfg.DSN)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("pg_terminate_backend: %d connections", k), nil
	case faultPGRestart:
		parts := strings.Fields(cfg.PGCluster)
		args := append([]string{"--skip-systemctl-redirect"}, append(parts, "restart")...)
		if o, err := exec.CommandContext(ctx, "pg_ctlcluster", args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("pg_ctlcluster %v: %w: %s", args, err, o)
		}
		deadline := time.Now().Add(cfg.Converge)
		for {
			c, err := pgx.Connect(ctx, cfg.DSN)
			if err == nil {
				c.Close(ctx)
				break
			}
			if time.Now().After(deadline) {
				return "", fmt.Errorf("PostgreSQL not back after %s: %w", cfg.Converge, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		return "PostgreSQL restarted", nil
	}
	return "", fmt.Errorf("unknown fault %q", kind)
}

// terminateBackends ends every other connection to the run's database.
func terminateBackends(ctx context.Context, dsn string) (int, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer c.Close(ctx)
	var n int
	err = c.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pg_terminate_backend: %w", err)
	}
	return n, nil
}

// readFinal reads the boards' final state straight from PostgreSQL, in one
// snapshot.
func readFinal(ctx context.Context, dsn string, boards []string) ([]FinalBoard, error) {
	var out []FinalBoard
	var err error
	for try := 0; try < 20; try++ { // the database may still be coming back
		if out, err = readFinalOnce(ctx, dsn, boards); err == nil {
			return out, nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return nil, fmt.Errorf("read the final state: %w", err)
}

func readFinalOnce(ctx context.Context, dsn string, boards []string) ([]FinalBoard, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	var out []FinalBoard
	for _, id := range boards {
		b := FinalBoard{ID: id, Keys: map[string]int64{}}
		if err := tx.QueryRow(ctx, `SELECT version FROM boards WHERE id = $1`, id).Scan(&b.Version); err != nil {
			return nil, fmt.Errorf("board %s: %w", id, err)
		}
		rows, _ := tx.Query(ctx, `SELECT id, version, data FROM board_rows WHERE board_id = $1 AND kind = 'n' AND deleted_ns IS NULL`, id)
		var r Row
		var data []byte
		if _, err := pgx.ForEachRow(rows, []any{&r.ID, &r.Version, &data}, func() error {
			var n struct{ Content string }
			if err := json.Unmarshal(data, &n); err != nil {
				return fmt.Errorf("row %s: %w", r.ID, err)
			}
			b.Rows = append(b.Rows, Row{ID: r.ID, Version: r.Version, Content: n.Content})
			return nil
		}); err != nil {
			return nil, fmt.Errorf("board %s rows: %w", id, err)
		}
		rows, _ = tx.Query(ctx, `SELECT key, version FROM idempotency_keys WHERE board_id = $1`, id)
		var key string
		var v int64
		if _, err := pgx.ForEachRow(rows, []any{&key, &v}, func() error { b.Keys[key] = v; return nil }); err != nil {
			return nil, fmt.Errorf("board %s keys: %w", id, err)
		}
		out = append(out, b)
	}
	return out, nil
}
