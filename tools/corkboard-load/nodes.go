package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"corkboard/board"
)

// nodesConfig is the nodes mode's own flags. The mode also reads
// -spawn-corkboard, -concurrency (pushers, and pgbench's clients),
// -push-boards (the spread boards), -duration (each phase), -conns
// (subscribers per node in the fan-out), -rate (the fan-out's pushes per
// second), -drain, -tmp, -keep and -email.
type nodesConfig struct {
	Nodes        int
	PG           string
	PoolMaxConns int
	Pgbench      string
	PgbenchFile  string
	Rounds       int
	Part         string
}

// addNodesFlags registers the nodes mode's flags.
func addNodesFlags(fs *flag.FlagSet, nc *nodesConfig) {
	fs.IntVar(&nc.Nodes, "nodes", 3, "nodes: how many nodes the several-node phases run (the other phases run one)")
	fs.StringVar(&nc.PG, "pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "nodes: a loopback PostgreSQL role that may create databases; the mode creates a fresh one and drops it at the end")
	fs.IntVar(&nc.PoolMaxConns, "pool-max-conns", 16, "nodes: each node's pool_max_conns")
	fs.StringVar(&nc.Pgbench, "pgbench", "", "nodes: a pgbench binary: measure the raw push transaction first, as the ceiling (empty: no ceiling)")
	fs.StringVar(&nc.PgbenchFile, "pgbench-script", "persist/postgres/bench/push.sql", "nodes: pgbench's script, the push transaction")
	fs.IntVar(&nc.Rounds, "rounds", 1, "nodes: how many times to run the ceiling and the four push phases, alternately")
	fs.StringVar(&nc.Part, "nodes-part", "all", "nodes: all | pushes | fanout")
}

// checkNodes checks the flags the nodes mode reads.
func (cfg *Config) checkNodes() error {
	nc := &cfg.NodesCfg
	if cfg.SpawnCorkboard == "" {
		return fmt.Errorf("-mode nodes needs -spawn-corkboard (it starts every node itself)")
	}
	switch nc.Part {
	case "all", "pushes", "fanout":
	default:
		return fmt.Errorf("-nodes-part must be all, pushes or fanout")
	}
	for _, c := range []struct {
		name   string
		v      int
		lo, hi int
	}{
		{"-nodes", nc.Nodes, 2, 16},
		{"-pool-max-conns", nc.PoolMaxConns, 1, 100},
		{"-rounds", nc.Rounds, 1, 10},
		{"-concurrency", cfg.Concurrency, 1, 1000},
		{"-push-boards", cfg.PushBoards, 2, 100_000},
		{"-conns", cfg.Conns, 1, 10_000},
	} {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("%s must be %d to %d", c.name, c.lo, c.hi)
		}
	}
	if cfg.Rate <= 0 || cfg.Rate > 10_000 {
		return fmt.Errorf("-rate must be above 0 and at most 10000")
	}
	if cfg.Duration < time.Second || cfg.Duration > time.Hour {
		return fmt.Errorf("-duration must be from 1s to 1h")
	}
	if _, err := pgURLs(nc.PG, "x", nc.PoolMaxConns); err != nil {
		return err
	}
	return nil
}

// dbNameRe is what the mode's database names look like; they are pasted
// into SQL, so nothing else is accepted.
var dbNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// pgDSNs are the addresses of the mode's database.
type pgDSNs struct {
	Admin string // the -pg database, for CREATE and DROP
	Node  string // the new database, with pool_max_conns, for -store
	Plain string // the new database for psql and pgbench (libpq refuses pool_max_conns)
}

// pgURLs derives the node's and pgbench's addresses of database db from
// the admin address, which must be a postgres:// URL on a loopback host.
func pgURLs(admin, db string, pool int) (pgDSNs, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return pgDSNs{}, fmt.Errorf("-pg: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return pgDSNs{}, fmt.Errorf("-pg: want a postgres:// URL, not %q", u.Scheme)
	}
	if !isLoopbackHost(u.Hostname()) {
		return pgDSNs{}, fmt.Errorf("-pg: only a loopback PostgreSQL (127.0.0.1, ::1, localhost), not %q", u.Hostname())
	}
	if !dbNameRe.MatchString(db) {
		return pgDSNs{}, fmt.Errorf("database name %q", db)
	}
	plain := *u
	plain.Path = "/" + db
	node := plain
	q := node.Query()
	q.Set("pool_max_conns", strconv.Itoa(pool))
	node.RawQuery = q.Encode()
	return pgDSNs{Admin: u.String(), Node: node.String(), Plain: plain.String()}, nil
}

// maxFigureTries bounds how often one figure is measured again after
// PostgreSQL went away under it.
const maxFigureTries = 3

// waitDB waits until PostgreSQL at dsn answers again, at most 2 minutes.
func waitDB(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		err := psql(ctx, dsn, "SELECT 1")
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PostgreSQL did not come back: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// psql runs one SQL command with psql against dsn.
func psql(ctx context.Context, dsn, sql string) error {
	out, err := exec.CommandContext(ctx, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql %q: %w: %s", sql, err, bytes.TrimSpace(out))
	}
	return nil
}

// NodesResult is the nodes mode's figures beyond the runs' table: the
// pgbench ceiling, each push phase against it, and the fan-out compared.
type NodesResult struct {
	Nodes   int            `json:"nodes"`
	Pushers int            `json:"pushers"`
	Ceiling []PgbenchRun   `json:"ceiling,omitempty"`
	Phases  []NodesPhase   `json:"phases,omitempty"`
	FanOut  *FanOutCompare `json:"fanOut,omitempty"`
}

// PgbenchRun is one pgbench run of the push transaction.
type PgbenchRun struct {
	Round   int        `json:"round"`
	Boards  int        `json:"boards"`
	Clients int        `json:"clients"`
	TPS     float64    `json:"tps"`
	AvgMs   float64    `json:"latencyAverageMs"`
	Load    [3]float64 `json:"loadAvgStart"`
	// Retries is how many earlier tries failed (PostgreSQL restarted).
	Retries int `json:"retries,omitempty"`
}

// NodesPhase is one push phase: pushers spread over nodes, as fast as
// acknowledged.
type NodesPhase struct {
	Round      int        `json:"round"`
	Nodes      int        `json:"nodes"`
	Boards     int        `json:"boards"`
	Pushers    int        `json:"pushers"`
	PushesPerS float64    `json:"pushesPerSecond"`
	P50Ms      float64    `json:"p50Ms"`
	P99Ms      float64    `json:"p99Ms"`
	Errors     int64      `json:"errors"`
	Load       [3]float64 `json:"loadAvgStart"`
	// Retries is how many earlier tries had failed pushes and were
	// discarded (PostgreSQL restarted).
	Retries int `json:"retries,omitempty"`
	// OfCeiling is PushesPerS over the same round's pgbench tps for as many
	// boards; 0 without a ceiling.
	OfCeiling float64 `json:"ofCeiling,omitempty"`
}

// FanOutCompare is push on node A, received on node A and on node B.
type FanOutCompare struct {
	Pushes     int64      `json:"pushesAcked"`
	Same       Summary    `json:"sameNode"`
	Other      Summary    `json:"otherNode"`
	P50Ratio   float64    `json:"p50RatioOtherOverSame"`
	P99Ratio   float64    `json:"p99RatioOtherOverSame"`
	Missing    int64      `json:"missing"`
	Load       [3]float64 `json:"loadAvgStart"`
	PushErrors []string   `json:"pushErrors,omitempty"`
}

// ofCeiling fills each phase's share of its round's ceiling for as many
// boards (the hot board against pgbench's 1 board, the spread against its
// -push-boards).
func (n *NodesResult) ofCeiling() {
	for i := range n.Phases {
		p := &n.Phases[i]
		for _, c := range n.Ceiling {
			if c.Round == p.Round && c.Boards == p.Boards && c.TPS > 0 {
				p.OfCeiling = p.PushesPerS / c.TPS
			}
		}
	}
}

// printNodes writes the nodes mode's figures.
func printNodes(w io.Writer, n *NodesResult) {
	fmt.Fprintf(w, "\nseveral nodes on one PostgreSQL, %d pushers (pgbench: as many clients)\n", n.Pushers)
	for _, c := range n.Ceiling {
		fmt.Fprintf(w, "  round %d  pgbench ceiling     %5d board(s)  %9.1f tps      avg %7.2f ms              load %.2f%s\n",
			c.Round, c.Boards, c.TPS, c.AvgMs, c.Load[0], retried(c.Retries))
	}
	for _, p := range n.Phases {
		ratio := "-"
		if p.OfCeiling > 0 {
			ratio = fmt.Sprintf("%.2f", p.OfCeiling)
		}
		fmt.Fprintf(w, "  round %d  %2d node(s)          %5d board(s)  %9.1f pushes/s p50 %7.2f ms p99 %7.2f ms  load %.2f  of ceiling %s  errors %d%s\n",
			p.Round, p.Nodes, p.Boards, p.PushesPerS, p.P50Ms, p.P99Ms, p.Load[0], ratio, p.Errors, retried(p.Retries))
	}
	if f := n.FanOut; f != nil {
		fmt.Fprintf(w, "  fan-out, %d pushes on node A (load %.2f): same node p50 %.2f ms p99 %.2f ms; other node p50 %.2f ms p99 %.2f ms; other ÷ same: p50 %.2f×, p99 %.2f×; missing %d\n",
			f.Pushes, f.Load[0], f.Same.P50Ms, f.Same.P99Ms, f.Other.P50Ms, f.Other.P99Ms, f.P50Ratio, f.P99Ratio, f.Missing)
		for _, e := range f.PushErrors {
			fmt.Fprintf(w, "  fan-out push error: %s\n", e)
		}
	}
}

// retried notes a figure measured again after failed tries.
func retried(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("  (after %d failed tries)", n)
}

// tpsRe and avgRe read pgbench's summary.
var (
	tpsRe = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	avgRe = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
)

// parsePgbench reads tps and the average latency from pgbench's output.
func parsePgbench(out []byte) (tps, avgMs float64, err error) {
	m := tpsRe.FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("no tps in pgbench's output: %.300s", out)
	}
	if tps, err = strconv.ParseFloat(string(m[1]), 64); err != nil {
		return 0, 0, err
	}
	if m := avgRe.FindSubmatch(out); m != nil {
		avgMs, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return tps, avgMs, nil
}

// runPgbench runs the push transaction over boards b1..b<boards> (which
// exist) with clients clients for d.
func runPgbench(ctx context.Context, bin, script, dsn string, boards, clients int, d time.Duration) (tps, avgMs float64, err error) {
	secs := max(int(d.Seconds()), 1)
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, 2)),
		"-T", strconv.Itoa(secs), "-D", "boards=" + strconv.Itoa(boards), "-f", script, dsn}
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("pgbench: %w: %.500s", err, out)
	}
	return parsePgbench(out)
}

// spawnNode starts corkboard as node id on store, on a free loopback port
// and a fresh data folder under parent, with extra flags after the others.
func spawnNode(ctx context.Context, bin, parent string, keep bool, store, id string, extra ...string) (*spawned, error) {
	dir, err := os.MkdirTemp(parent, "corkboard-load-"+id+"-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"-addr", "127.0.0.1:" + strconv.Itoa(port), "-data", filepath.Join(dir, "data"),
		"-public-url", base, "-store", store, "-node-id", id}, unlimitedLive...)
	args = append(args, extra...)
	s := &spawned{name: "corkboard-" + id, cmd: exec.Command(bin, args...), dir: dir, keep: keep, base: base}
	if err := s.start(ctx, base+"/api/auth/me"); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// cluster is the running nodes and a logged-in client of each.
type cluster struct {
	cfg     *Config
	store   string
	session string
	nodes   []*spawned
	apis    []*api
	log     *slog.Logger
}

// grow starts nodes until there are n, each reusing the session (sessions
// live in the database) or, failing that, logging in through its outbox.
func (c *cluster) grow(ctx context.Context, n int) error {
	for len(c.nodes) < n {
		id := fmt.Sprintf("node%d", len(c.nodes)+1)
		s, err := spawnNode(ctx, c.cfg.SpawnCorkboard, c.cfg.TempDir, c.cfg.Keep, c.store, id)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, s)
		a, err := newAPI(s.base, c.cfg.Concurrency+16)
		if err != nil {
			return err
		}
		c.apis = append(c.apis, a)
		a.session = c.session
		if !a.sessionValid(ctx) {
			if err := a.login(ctx, c.cfg.Email, s.outbox()); err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			c.session = a.session
		}
		c.log.Info("node started", "node", id, "url", s.base, "pid", s.PID())
	}
	return nil
}

// shrink stops nodes until n are left.
func (c *cluster) shrink(n int) {
	for len(c.nodes) > n {
		last := len(c.nodes) - 1
		c.apis[last].http.CloseIdleConnections()
		c.nodes[last].stop()
		c.nodes, c.apis = c.nodes[:last], c.apis[:last]
	}
}

// push sends one single-note push with an idempotency key to board on a.
func push(ctx context.Context, a *api, board, key string, p board.Push) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", a.base+"/api/boards/"+board+"/sync", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Origin", a.origin)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "session="+a.session)
	req.Header.Set("Idempotency-Key", key)
	res, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, maxAPIBody))
	if res.StatusCode != http.StatusOK {
		return &apiError{Method: "POST", Path: "/api/boards/" + board + "/sync", Status: res.StatusCode, Body: string(data)}
	}
	return nil
}

// pushPhase runs pushers spread over the first n nodes (pusher i on node
// i mod n), each pushing to one of boards at random when its last push is
// answered, for d.
func (c *cluster) pushPhase(ctx context.Context, tag string, n int, boards []string, d time.Duration) (*RunResult, error) {
	pushers := c.cfg.Concurrency
	key := strings.NewReplacer(" ", "", "(", "", ")", "").Replace(tag) // keys are visible ASCII
	res := &RunResult{Name: tag, Target: fmt.Sprintf("corkboard ×%d", n), Boards: len(boards), Writers: pushers, PushOver: "rest", DurationS: d.Seconds()}
	run := closedLoop(ctx, 0, res, pushers, d, maxPushesPerPusher, func(i int, k int64, start, now time.Time) error {
		b := boards[0]
		if len(boards) > 1 {
			b = boards[rand.IntN(len(boards))]
		}
		m := marker{Writer: i, Seq: k, SentNs: int64(now.Sub(start))}
		return push(ctx, c.apis[i%n], b, fmt.Sprintf("%s-%d-%d", key, i, k), notePush(m))
	})
	res.Server = nil // several processes; closedLoop sampled none
	res.PushesAcked = int64(len(run.lat))
	res.PushesSent = res.PushesAcked + res.Errors
	res.PushesPerS = float64(len(run.lat)) / run.elapsed.Seconds()
	s := summarize(run.lat)
	res.AckLatency = &s
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// subscriber is one live connection of the fan-out: the latency of every
// push it received, by push.
type subscriber struct {
	mu   sync.Mutex
	seen map[int64]time.Duration
}

// fanOut opens -conns subscribers on node A and as many on node B to a
// fresh board, pushes on A at -rate one at a time for -duration, and
// compares push→receive on each node.
func (c *cluster) fanOut(ctx context.Context, boardID string, rep *Report) (*FanOutCompare, error) {
	cfg := c.cfg
	out := &FanOutCompare{Load: loadAverage()}
	start := time.Now()
	subs := make([][]*subscriber, 2) // [0] on node A, [1] on node B
	var wg sync.WaitGroup
	readCtx, stopReading := context.WithCancel(ctx)
	defer func() { stopReading(); wg.Wait() }()
	for side := range 2 {
		rel := &corkRelay{api: c.apis[side]}
		for range cfg.Conns {
			conn, err := rel.dialHello(ctx, boardID)
			if err != nil {
				return out, err
			}
			s := &subscriber{seen: map[int64]time.Duration{}}
			subs[side] = append(subs[side], s)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.CloseNow()
				for {
					_, data, err := conn.Read(readCtx)
					if err != nil {
						return
					}
					if !bytes.HasPrefix(data, changesPrefix) {
						continue
					}
					now := time.Since(start)
					s.mu.Lock()
					scanMarkers(data, func(m marker) {
						if _, dup := s.seen[m.Seq]; !dup {
							s.seen[m.Seq] = now - time.Duration(m.SentNs)
						}
					})
					s.mu.Unlock()
				}
			}()
		}
	}
	// Joins cross the bus; let them pass before timing.
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
		return out, ctx.Err()
	}
	var acked []int64
	tick := time.NewTicker(time.Duration(float64(time.Second) / cfg.Rate))
	defer tick.Stop()
	end := time.Now().Add(cfg.Duration)
	for seq := int64(0); time.Now().Before(end) && ctx.Err() == nil; seq++ {
		sent := time.Since(start)
		// A note of its own per push: a catch-up read after several
		// commits holds each note's latest content only, and every push's
		// marker must reach every subscriber.
		p := notePush(marker{Seq: seq, SentNs: int64(sent)})
		p.Notes.Upserted[0].ID = fmt.Sprintf("fan-%d", seq)
		err := push(ctx, c.apis[0], boardID, fmt.Sprintf("fan-%d", seq), p)
		if err != nil {
			if len(out.PushErrors) < 5 {
				out.PushErrors = append(out.PushErrors, err.Error())
			}
		} else {
			acked = append(acked, seq)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	out.Pushes = int64(len(acked))
	// Drain: until every subscriber holds every acknowledged push, or -drain.
	complete := func() bool {
		for _, side := range subs {
			for _, s := range side {
				s.mu.Lock()
				n := len(s.seen)
				s.mu.Unlock()
				if n < len(acked) {
					return false
				}
			}
		}
		return true
	}
	for deadline := time.Now().Add(cfg.Drain); !complete() && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(50 * time.Millisecond)
	}
	stopReading()
	wg.Wait()
	names := []string{"fan-out same node (A→A)", "fan-out other node (A→B)"}
	for side, list := range subs {
		var lat []time.Duration
		var missing int64
		for _, s := range list {
			for _, q := range acked {
				if d, ok := s.seen[q]; ok {
					lat = append(lat, d)
				} else {
					missing++
				}
			}
		}
		sum := summarize(lat)
		out.Missing += missing
		rep.Runs = append(rep.Runs, &RunResult{Name: names[side], Target: "corkboard ×2", Boards: 1, Conns: len(list), Writers: 1, PushOver: "rest",
			RatePerS: cfg.Rate, DurationS: cfg.Duration.Seconds(), PushesAcked: out.Pushes, Expected: out.Pushes * int64(len(list)),
			Delivered: int64(len(lat)), Missing: missing, Latency: &sum})
		if side == 0 {
			out.Same = sum
		} else {
			out.Other = sum
		}
	}
	if out.Same.P50Ms > 0 {
		out.P50Ratio = out.Other.P50Ms / out.Same.P50Ms
	}
	if out.Same.P99Ms > 0 {
		out.P99Ratio = out.Other.P99Ms / out.Same.P99Ms
	}
	return out, ctx.Err()
}

// createDB creates the run's database, corkboard_load_<prefix>, from -pg;
// drop drops it.
func createDB(ctx context.Context, nc nodesConfig, prefix string, log *slog.Logger) (dsn pgDSNs, drop func(), err error) {
	db := "corkboard_load_" + prefix
	if dsn, err = pgURLs(nc.PG, db, nc.PoolMaxConns); err != nil {
		return pgDSNs{}, nil, err
	}
	if err := psql(ctx, dsn.Admin, "CREATE DATABASE "+db); err != nil {
		return pgDSNs{}, nil, err
	}
	log.Info("database created", "db", db)
	return dsn, func() {
		// A fresh context: the run's may have ended, and the database must go.
		// Tried for a minute: PostgreSQL may be restarting (it refuses
		// connections while it shuts down and recovers).
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for {
			err := psql(dctx, dsn.Admin, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
			if err == nil {
				log.Info("database dropped", "db", db)
				return
			}
			select {
			case <-dctx.Done():
				log.Error("drop the database (drop it yourself)", "db", db, "err", err)
				return
			case <-time.After(2 * time.Second):
			}
		}
	}, nil
}

// runNodes is the nodes mode: a fresh database, the pgbench ceiling, the
// four push phases (1 node and -nodes nodes, one hot board and
// -push-boards boards), -rounds times, then the fan-out compare.
func runNodes(ctx context.Context, cfg *Config, rep *Report, log *slog.Logger) error {
	nc := cfg.NodesCfg
	prefix := newPrefix()
	dsn, dropDB, err := createDB(ctx, nc, prefix, log)
	if err != nil {
		return err
	}
	defer dropDB()

	c := &cluster{cfg: cfg, store: dsn.Node, log: log}
	defer c.shrink(0)
	// The first node creates the schema, which pgbench needs too, and
	// logs in; the others share its session through the database.
	if err := c.grow(ctx, 1); err != nil {
		return err
	}
	res := &NodesResult{Nodes: nc.Nodes, Pushers: cfg.Concurrency}
	rep.Nodes = res
	defer res.ofCeiling() // a run cut short keeps the ratios it has

	hot := []string{prefix + "-hot"}
	spread := make([]string, cfg.PushBoards)
	for i := range spread {
		spread[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	fan := prefix + "-fan"
	if err := forEach(ctx, append(append([]string{fan}, hot...), spread...), 16, c.apis[0].claim); err != nil {
		return err
	}
	if nc.Pgbench != "" && nc.Part != "fanout" {
		// pgbench's own boards, b1..bN, as persist/postgres/bench/run.sh.
		if err := psql(ctx, dsn.Plain, fmt.Sprintf("INSERT INTO boards (id, name, owner_email, created_ns, updated_at) SELECT 'b' || i, '', 'o@example.com', 0, '' FROM generate_series(1, %d) i", cfg.PushBoards)); err != nil {
			return err
		}
	}

	for round := 1; round <= nc.Rounds && nc.Part != "fanout"; round++ {
		if nc.Pgbench != "" {
			c.shrink(1) // only node 1, idle, while pgbench runs
			for _, b := range []int{1, cfg.PushBoards} {
				for try := 1; ; try++ {
					load := loadAverage()
					log.Info("pgbench", "round", round, "boards", b, "clients", cfg.Concurrency, "for", cfg.Duration)
					tps, avg, err := runPgbench(ctx, nc.Pgbench, nc.PgbenchFile, dsn.Plain, b, cfg.Concurrency, cfg.Duration)
					if err == nil {
						res.Ceiling = append(res.Ceiling, PgbenchRun{Round: round, Boards: b, Clients: cfg.Concurrency, TPS: tps, AvgMs: avg, Load: load, Retries: try - 1})
						break
					}
					if try == maxFigureTries || ctx.Err() != nil {
						return err
					}
					log.Warn("pgbench failed (PostgreSQL restarting?); measuring again", "err", err)
					if err := waitDB(ctx, dsn.Plain); err != nil {
						return err
					}
				}
			}
		}
		for _, ph := range []struct {
			nodes  int
			boards []string
		}{{1, hot}, {nc.Nodes, hot}, {1, spread}, {nc.Nodes, spread}} {
			c.shrink(ph.nodes)
			if err := c.grow(ctx, ph.nodes); err != nil {
				return err
			}
			for try := 1; ; try++ {
				// Each try has keys of its own: a key already used would
				// replay its first answer instead of pushing.
				tag := fmt.Sprintf("r%d %d node(s) %d board(s)", round, ph.nodes, len(ph.boards))
				if try > 1 {
					tag += fmt.Sprintf(" try%d", try)
				}
				load := loadAverage()
				log.Info("pushing", "round", round, "nodes", ph.nodes, "boards", len(ph.boards), "pushers", cfg.Concurrency, "for", cfg.Duration)
				r, err := c.pushPhase(ctx, tag, ph.nodes, ph.boards, cfg.Duration)
				if err != nil {
					return err
				}
				if r.Errors > 0 && try < maxFigureTries {
					log.Warn("pushes failed (PostgreSQL restarting?); measuring the phase again", "errors", r.Errors, "sample", r.ErrorSamples)
					if err := waitDB(ctx, dsn.Plain); err != nil {
						return err
					}
					continue
				}
				rep.Runs = append(rep.Runs, r)
				p := NodesPhase{Round: round, Nodes: ph.nodes, Boards: len(ph.boards), Pushers: cfg.Concurrency,
					PushesPerS: r.PushesPerS, Errors: r.Errors, Load: load, Retries: try - 1}
				if r.AckLatency != nil {
					p.P50Ms, p.P99Ms = r.AckLatency.P50Ms, r.AckLatency.P99Ms
				}
				res.Phases = append(res.Phases, p)
				break
			}
		}
	}
	if nc.Part == "pushes" {
		return nil
	}
	if err := c.grow(ctx, 2); err != nil {
		return err
	}
	log.Info("fan-out", "subscribers per node", cfg.Conns, "rate", cfg.Rate, "for", cfg.Duration)
	f, err := c.fanOut(ctx, fan, rep)
	res.FanOut = f
	return err
}
