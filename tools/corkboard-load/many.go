package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The memory-nodes mode: the memory mode's idle live connections, held by
// several Corkboard nodes on one PostgreSQL and opened by several worker
// processes of this tool. One process may hold only as many sockets as its
// open-file limit allows (20,000 on the machine this was written for, and
// not raisable there), in the server and in the tool alike, so 50,000
// connections need three nodes and four workers.
//
// The parent starts the nodes, logs in, claims the boards and starts the
// workers (this binary again, with workerArg as its only argument). A
// worker reads its share as one JSON line on stdin, opens it, and then
// speaks a line protocol on stdout (workerState.apply reads it):
//
//	opened <local> <remote> <failed> <node 0> <node 1> …   all dialled: connected counts, on the board's home node and elsewhere, and per node
//	settled <messages>                                     after "settle": the join announcements died down
//	pushed <local> <remote> <unix ns>                      connections that got a changes message, and when the latest came
//	errors <count> <first error>                           connections that failed or ended
//	done                                                   after "stop": every connection closed
//
// The parent writes "settle" and "stop" lines to the workers' stdin; a
// worker whose stdin ends closes its connections and exits too.

// workerArg is the hidden argument that makes the tool a worker.
const workerArg = "-memory-nodes-worker"

// connsPerWorker is how many connections a worker opens when -workers is
// 0, well under a 20,000 open-file limit.
const connsPerWorker = 15_000

// fdSpare is the descriptors a process needs besides its connections:
// listeners, the database pool and its LISTEN connection, logs, the Go
// runtime's own.
const fdSpare = 300

// manyFlags are the memory-nodes mode's own flags. The mode also reads
// -nodes, -conns (all connections), -per-board, -source-addrs, -hold,
// -pg, -pool-max-conns, -dial-concurrency, -settle, -drain,
// -spawn-corkboard, -tmp, -keep and -email.
type manyFlags struct {
	workers int
	store   string
}

func addManyFlags(fs *flag.FlagSet, m *manyFlags) {
	fs.IntVar(&m.workers, "workers", 0, "memory-nodes: worker processes opening the connections (0: one per 15,000)")
	fs.StringVar(&m.store, "store", "", "memory-nodes: an existing loopback postgres:// database for the nodes (empty: create a fresh one from -pg and drop it at the end)")
}

// checkMemoryNodes checks the flags the memory-nodes mode reads.
func (cfg *Config) checkMemoryNodes() error {
	if cfg.SpawnCorkboard == "" {
		return fmt.Errorf("-mode memory-nodes needs -spawn-corkboard (it starts every node itself)")
	}
	if err := cfg.Memory.check(); err != nil {
		return err
	}
	for _, c := range []struct {
		name   string
		v      int
		lo, hi int
	}{
		{"-nodes", cfg.NodesCfg.Nodes, 1, 16},
		{"-conns", cfg.Conns, 1, 200_000},
		{"-workers", cfg.Many.workers, 0, 64},
		{"-pool-max-conns", cfg.NodesCfg.PoolMaxConns, 1, 100},
		{"-dial-concurrency", cfg.DialConcurrency, 1, 10_000},
	} {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("%s must be %d to %d", c.name, c.lo, c.hi)
		}
	}
	if cfg.Many.store != "" {
		u, err := url.Parse(cfg.Many.store)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || !isLoopbackHost(u.Hostname()) {
			return fmt.Errorf("-store: want a postgres:// URL on a loopback host")
		}
		return nil
	}
	_, err := pgURLs(cfg.NodesCfg.PG, "x", cfg.NodesCfg.PoolMaxConns)
	return err
}

// workerCount is -workers, or one worker per connsPerWorker connections.
func (m *manyFlags) workerCount(conns int) int {
	if m.workers > 0 {
		return m.workers
	}
	return (conns + connsPerWorker - 1) / connsPerWorker
}

// homeNode is the node every push to board b goes to.
func homeNode(b, nodes int) int { return (b / 2) % nodes }

// placeConn says where connection i goes: its board, and its node of
// nodes. Boards alternate: an even board has all its connections on its
// home node; an odd board's go round the nodes from its home. So an even
// board's deliveries are all on the pushing node, and most of an odd
// board's cross the bus (with 3 nodes and 10 per board: 6 of 10).
func placeConn(i, perBoard, nodes int) (board, node int) {
	b, j := i/perBoard, i%perBoard
	home := homeNode(b, nodes)
	if b%2 == 0 {
		return b, home
	}
	return b, (home + j) % nodes
}

// connsPerNode is how many of conns connections placeConn puts on each node.
func connsPerNode(conns, perBoard, nodes int) []int {
	out := make([]int, nodes)
	for i := range conns {
		_, n := placeConn(i, perBoard, nodes)
		out[n]++
	}
	return out
}

// boardName is board b of the run.
func boardName(prefix string, b int) string { return prefix + "-" + strconv.Itoa(b) }

// workerSpec is one worker's share: connections First to First+Count-1.
type workerSpec struct {
	Nodes           []string `json:"nodes"` // base URLs, by node index
	Session         string   `json:"session"`
	Prefix          string   `json:"prefix"`
	First           int      `json:"first"`
	Count           int      `json:"count"`
	PerBoard        int      `json:"perBoard"`
	SourceAddrs     int      `json:"sourceAddrs"`
	DialConcurrency int      `json:"dialConcurrency"`
	SettleMaxMs     int64    `json:"settleMaxMs"`
}

// splitWorkers shares conns connections among k workers, in runs of
// consecutive connections (so a board is on one or two workers).
func splitWorkers(conns, k int) (first, count []int) {
	for w := range k {
		lo, hi := conns*w/k, conns*(w+1)/k
		first, count = append(first, lo), append(count, hi-lo)
	}
	return first, count
}

// workerState is what the parent knows of one worker, from its lines.
type workerState struct {
	Opened        bool
	Local, Remote int // connections held
	Failed        int
	PerNode       []int
	Settled       bool
	Msgs          int64
	PushedLocal   int64
	PushedRemote  int64
	LastPushNs    int64
	Errors        int64
	FirstError    string
	Done          bool
	// Exited is set by the parent when the worker's stdout ended.
	Exited bool
}

// apply reads one line of the worker protocol.
func (w *workerState) apply(line string) error {
	verb, rest, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
	ints := func(want int, atLeast bool) ([]int64, error) {
		f := strings.Fields(rest)
		if len(f) < want || (!atLeast && len(f) != want) {
			return nil, fmt.Errorf("worker line %q: want %d numbers", line, want)
		}
		out := make([]int64, len(f))
		for i, s := range f {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("worker line %q: %q is not a count", line, s)
			}
			out[i] = n
		}
		return out, nil
	}
	switch verb {
	case "opened":
		n, err := ints(3, true)
		if err != nil {
			return err
		}
		w.Opened, w.Local, w.Remote, w.Failed = true, int(n[0]), int(n[1]), int(n[2])
		w.PerNode = w.PerNode[:0]
		for _, c := range n[3:] {
			w.PerNode = append(w.PerNode, int(c))
		}
	case "settled":
		n, err := ints(1, false)
		if err != nil {
			return err
		}
		w.Settled, w.Msgs = true, n[0]
	case "pushed":
		n, err := ints(3, false)
		if err != nil {
			return err
		}
		w.PushedLocal, w.PushedRemote, w.LastPushNs = n[0], n[1], n[2]
	case "errors":
		count, text, _ := strings.Cut(rest, " ")
		n, err := strconv.ParseInt(count, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("worker line %q: %q is not a count", line, count)
		}
		w.Errors, w.FirstError = n, text
	case "done":
		w.Done = true
	default:
		return fmt.Errorf("worker line %q: unknown", line)
	}
	return nil
}

// workerTotals is every worker's state summed.
type workerTotals struct {
	Workers, Opened, Settled, Done, Exited int
	Local, Remote, Failed                  int
	PerNode                                []int
	Msgs                                   int64
	PushedLocal, PushedRemote              int64
	LastPushNs                             int64
	Errors                                 int64
	FirstError                             string
}

// Connected is the connections held in all.
func (t workerTotals) Connected() int { return t.Local + t.Remote }

// Pushed is the connections that got a push in all.
func (t workerTotals) Pushed() int64 { return t.PushedLocal + t.PushedRemote }

// sumWorkers adds up the workers' states for nodes nodes.
func sumWorkers(ws []*workerState, nodes int) workerTotals {
	t := workerTotals{Workers: len(ws), PerNode: make([]int, nodes)}
	for _, w := range ws {
		if w.Opened {
			t.Opened++
		}
		if w.Settled {
			t.Settled++
		}
		if w.Done {
			t.Done++
		}
		if w.Exited {
			t.Exited++
		}
		t.Local += w.Local
		t.Remote += w.Remote
		t.Failed += w.Failed
		for n, c := range w.PerNode {
			if n < nodes {
				t.PerNode[n] += c
			}
		}
		t.Msgs += w.Msgs
		t.PushedLocal += w.PushedLocal
		t.PushedRemote += w.PushedRemote
		t.LastPushNs = max(t.LastPushNs, w.LastPushNs)
		t.Errors += w.Errors
		if t.FirstError == "" {
			t.FirstError = w.FirstError
		}
	}
	return t
}

// workerMain is the tool as a worker: its spec on stdin, its lines on
// stdout. It returns the exit status.
func workerMain(ctx context.Context) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("worker", os.Getpid())
	if _, err := raiseNoFile(); err != nil {
		log.Warn("could not raise the open-file limit", "err", err)
	}
	if err := runWorker(ctx, os.Stdin, os.Stdout, log); err != nil {
		log.Error("worker", "err", err)
		return 1
	}
	return 0
}

// lineWriter writes whole lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}

// runWorker opens the spec's connections and answers the parent's lines
// until "stop" or the end of in.
func runWorker(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return fmt.Errorf("no spec on stdin: %v", sc.Err())
	}
	var spec workerSpec
	if err := json.Unmarshal(sc.Bytes(), &spec); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	if len(spec.Nodes) == 0 || spec.PerBoard < 1 || spec.Count < 0 || spec.SourceAddrs < 1 || spec.DialConcurrency < 1 {
		return fmt.Errorf("spec: incomplete: %s", sc.Bytes())
	}
	apis := make([]*api, len(spec.Nodes))
	for n, base := range spec.Nodes {
		a, err := newAPI(base, 4)
		if err != nil {
			return err
		}
		a.session = spec.Session
		apis[n] = a
	}
	lines := &lineWriter{w: out}
	cmds := make(chan string)
	go func() {
		defer close(cmds)
		for sc.Scan() {
			cmds <- sc.Text()
		}
	}()

	pool := newSourcePool(spec.SourceAddrs)
	var lastNs atomic.Int64
	isPush := func(data []byte) bool {
		if !bytes.HasPrefix(data, changesPrefix) {
			return false
		}
		now := time.Now().UnixNano()
		for {
			old := lastNs.Load()
			if now <= old || lastNs.CompareAndSwap(old, now) {
				return true
			}
		}
	}
	// sets[0] holds the connections on their board's home node (a push
	// reaches them there), sets[1] the others (a push reaches them over
	// the bus).
	sets := [2]*idleSet{newIdleSet(ctx, isPush), newIdleSet(ctx, isPush)}
	defer func() {
		for _, s := range sets {
			s.close()
		}
	}()
	var lists [2][]int
	for i := spec.First; i < spec.First+spec.Count; i++ {
		b, n := placeConn(i, spec.PerBoard, len(spec.Nodes))
		k := 0
		if n != homeNode(b, len(spec.Nodes)) {
			k = 1
		}
		lists[k] = append(lists[k], i)
	}
	perNode := make([]atomic.Int64, len(spec.Nodes))
	for k, s := range sets {
		list := lists[k]
		s.grow(ctx, len(list), spec.DialConcurrency, func(ctx context.Context, j int) (*websocket.Conn, error) {
			b, n := placeConn(list[j], spec.PerBoard, len(spec.Nodes))
			c, err := dialLiveFrom(ctx, apis[n], pool.client(), boardName(spec.Prefix, b))
			if err == nil {
				perNode[n].Add(1)
			}
			return c, err
		})
	}
	local, remote := len(sets[0].conns), len(sets[1].conns)
	opened := fmt.Sprintf("opened %d %d %d", local, remote, spec.Count-local-remote)
	for n := range perNode {
		opened += " " + strconv.FormatInt(perNode[n].Load(), 10)
	}
	errs := func() (int64, string) {
		var first string
		for _, s := range sets {
			if e := s.firstErr.Load(); e != nil && first == "" {
				first = strings.ReplaceAll(*e, "\n", " ")
			}
		}
		return sets[0].errs.Load() + sets[1].errs.Load(), first
	}
	lastErrs := int64(-1)
	reportErrs := func() {
		if n, first := errs(); n != lastErrs {
			lines.printf("errors %d %s", n, first)
			lastErrs = n
		}
	}
	reportErrs()
	lines.printf("%s", opened)
	log.Info("connections open", "local", local, "remote", remote)

	// Until "settle", then until "stop"; the pushes are reported as they
	// come, every 100 ms at most.
	msgs := func() int64 { return sets[0].msgs.Load() + sets[1].msgs.Load() }
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastPushed := [3]int64{-1, -1, -1}
	reportPushed := func() {
		p := [3]int64{sets[0].pushed.Load(), sets[1].pushed.Load(), lastNs.Load()}
		if p != lastPushed {
			lines.printf("pushed %d %d %d", p[0], p[1], p[2])
			lastPushed = p
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			reportErrs()
			if lastPushed[0] >= 0 {
				reportPushed()
			}
		case cmd, ok := <-cmds:
			switch {
			case !ok || cmd == "stop":
				reportPushed()
				reportErrs()
				for _, s := range sets {
					s.close()
				}
				lines.printf("done")
				return nil
			case cmd == "settle":
				settle(ctx, msgs, 500*time.Millisecond, time.Duration(spec.SettleMaxMs)*time.Millisecond)
				lines.printf("settled %d", msgs())
				reportPushed()
			default:
				return fmt.Errorf("unknown command %q", cmd)
			}
		}
	}
}

// MemoryNodesReport is what the memory-nodes mode measured.
type MemoryNodesReport struct {
	Nodes       int    `json:"nodes"`
	Workers     int    `json:"workers"`
	PerBoard    int    `json:"perBoard"`
	SourceAddrs int    `json:"sourceAddresses"`
	OpenFiles   uint64 `json:"openFileLimit"`
	Conns       int    `json:"conns"`
	Connected   int    `json:"connected"`
	// RemoteConns is the connections not on their board's home node: a
	// push reaches them over the bus.
	RemoteConns int         `json:"remoteConns"`
	Failed      int         `json:"failed"`
	Boards      int         `json:"boards"`
	ConnectS    float64     `json:"connectSeconds"`
	SettleS     float64     `json:"settleSeconds"`
	HoldS       float64     `json:"holdSeconds"`
	LoadAvg     [3]float64  `json:"loadAvg"`
	PerNode     []*NodeHeld `json:"perNode"`
	// RSSIdle and RSSHeld are the nodes' RSS summed, before the boards
	// were claimed and with every connection held; BytesPerConn is their
	// difference over Connected.
	RSSIdle      int64           `json:"rssIdleBytes"`
	RSSHeld      int64           `json:"rssHeldBytes"`
	BytesPerConn float64         `json:"bytesPerConn"`
	Goroutines   int             `json:"goroutines"`
	Errors       int64           `json:"errors"`
	FirstError   string          `json:"firstError,omitempty"`
	Pushes       *NodesPushCheck `json:"pushes,omitempty"`
	Store        string          `json:"store"`
	// WorkerRSS is each worker's RSS with every connection held: the
	// clients' side.
	WorkerRSS []int64 `json:"workerRssBytes,omitempty"`
}

// NodeHeld is one node with its share of the connections held.
type NodeHeld struct {
	Node         string           `json:"node"`
	PID          int              `json:"pid"`
	Placed       int              `json:"placed"`
	Connected    int              `json:"connected"`
	RSSIdle      int64            `json:"rssIdleBytes"`
	RSSHeld      int64            `json:"rssHeldBytes"`
	BytesPerConn float64          `json:"bytesPerConn"`
	Goroutines   int              `json:"goroutines"`
	MemStats     map[string]int64 `json:"memStats,omitempty"`
	// HoldCPUPercent is the node's CPU over the hold, in percent of one
	// core: what idle connections cost it (with several nodes, each room
	// with subscribers rechecks its board's version every -node-poll).
	HoldCPUPercent float64 `json:"holdCpuPercent"`
}

// NodesPushCheck is one push to every board, each on its home node, and
// how many connections received it.
type NodesPushCheck struct {
	Boards   int   `json:"boards"`
	Conns    int   `json:"conns"`
	Received int64 `json:"received"`
	// ReceivedRemote of RemoteConns came over the bus.
	ReceivedRemote int64 `json:"receivedRemote"`
	RemoteConns    int   `json:"remoteConns"`
	Missing        int64 `json:"missing"`
	Errors         int64 `json:"pushErrors"`
	// PushesS is the first push to the last one answered; FirstToLastS the
	// first push to the last delivery.
	PushesS      float64    `json:"pushesSeconds"`
	FirstToLastS float64    `json:"firstPushToLastDeliverySeconds"`
	LoadAvg      [3]float64 `json:"loadAvg"`
}

// manyNode is one running node.
type manyNode struct {
	srv   *spawned
	api   *api
	probe *prober
	idle  *ProcSample
}

// manyWorker is one running worker process.
type manyWorker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

// workerPool is the parent's side of the workers: their states, updated
// from their lines, and a signal when any changed.
type workerPool struct {
	mu      sync.Mutex
	states  []*workerState
	bad     error // a line that did not parse
	changed chan struct{}
	workers []*manyWorker
	nodes   int
}

func (p *workerPool) totals() (workerTotals, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return sumWorkers(p.states, p.nodes), p.bad
}

// read applies w's lines until its stdout ends.
func (p *workerPool) read(w int, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	note := func(f func()) {
		p.mu.Lock()
		f()
		p.mu.Unlock()
		select {
		case p.changed <- struct{}{}:
		default:
		}
	}
	for sc.Scan() {
		line := sc.Text()
		note(func() {
			if err := p.states[w].apply(line); err != nil && p.bad == nil {
				p.bad = err
			}
		})
	}
	note(func() { p.states[w].Exited = true })
}

// wait waits until cond holds for the totals, at most max. It fails when
// a worker exits before it is told to stop, or a line does not parse.
func (p *workerPool) wait(ctx context.Context, what string, max time.Duration, cond func(workerTotals) bool) (workerTotals, error) {
	ctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	for {
		t, bad := p.totals()
		if bad != nil {
			return t, bad
		}
		if cond(t) {
			return t, nil
		}
		if t.Exited > t.Done {
			return t, fmt.Errorf("%s: a worker exited early (see its log above)", what)
		}
		select {
		case <-ctx.Done():
			return t, fmt.Errorf("%s: not after %s: %w", what, max, ctx.Err())
		case <-p.changed:
		}
	}
}

// send writes line to every worker.
func (p *workerPool) send(line string) error {
	for i, w := range p.workers {
		if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
			return fmt.Errorf("worker %d: %w", i, err)
		}
	}
	return nil
}

// stop tells every worker to stop and waits for them (30 s, then kills).
func (p *workerPool) stop() {
	_ = p.send("stop")
	for _, w := range p.workers {
		w.stdin.Close()
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	}
}

// rss is each worker's RSS now (0 when unknown).
func (p *workerPool) rss() []int64 {
	out := make([]int64, len(p.workers))
	for i, w := range p.workers {
		var s *ProcSample
		newProber(w.cmd.Process.Pid).sample(&s)
		if s != nil {
			out[i] = s.RSSBytes
		}
	}
	return out
}

// startWorkers starts one worker per spec.
func startWorkers(specs []workerSpec, nodes int) (*workerPool, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary to start workers: %w", err)
	}
	p := &workerPool{changed: make(chan struct{}, 1), nodes: nodes}
	for i, spec := range specs {
		cmd := exec.Command(exe, workerArg)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			p.stop()
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			p.stop()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			p.stop()
			return nil, fmt.Errorf("start worker %d: %w", i, err)
		}
		w := &manyWorker{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
		p.workers = append(p.workers, w)
		p.states = append(p.states, &workerState{})
		line, err := json.Marshal(spec)
		if err != nil {
			p.stop()
			return nil, err
		}
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			p.stop()
			return nil, fmt.Errorf("worker %d: %w", i, err)
		}
		go func() {
			p.read(i, stdout)
			w.done <- cmd.Wait()
		}()
	}
	return p, nil
}

// runMemoryNodes is the memory-nodes mode.
func runMemoryNodes(ctx context.Context, cfg *Config, rep *Report, log *slog.Logger) error {
	nc, mf := cfg.NodesCfg, cfg.Memory
	limit, _ := raiseNoFile()
	prefix := newPrefix()
	k := cfg.Many.workerCount(cfg.Conns)
	boards := (cfg.Conns + mf.perBoard - 1) / mf.perBoard
	placed := connsPerNode(cfg.Conns, mf.perBoard, nc.Nodes)
	mr := &MemoryNodesReport{Nodes: nc.Nodes, Workers: k, PerBoard: mf.perBoard, SourceAddrs: mf.sourceAddrs, OpenFiles: limit,
		Conns: cfg.Conns, Boards: boards, HoldS: mf.hold.Seconds()}
	rep.MemoryNodes = mr
	// Each process holds one descriptor per connection: say so before
	// starting anything rather than fail at the limit.
	if limit > 0 {
		for n, c := range placed {
			if uint64(c)+fdSpare > limit {
				return fmt.Errorf("node %d would hold %d connections, over its open-file limit of %d less %d spare: use more -nodes", n+1, c, limit, fdSpare)
			}
		}
		if per := (cfg.Conns + k - 1) / k; uint64(per)+fdSpare > limit {
			return fmt.Errorf("a worker would hold %d connections, over its open-file limit of %d less %d spare: use more -workers", per, limit, fdSpare)
		}
	}

	store := cfg.Many.store
	mr.Store = "given (-store)"
	if store == "" {
		dsn, drop, err := createDB(ctx, nc, prefix, log)
		if err != nil {
			return err
		}
		defer drop()
		store, mr.Store = dsn.Node, "fresh database"
	}

	var nodes []*manyNode
	defer func() {
		for _, n := range nodes {
			n.api.http.CloseIdleConnections()
			n.srv.stop()
		}
	}()
	var session string
	for i := range nc.Nodes {
		id := fmt.Sprintf("node%d", i+1)
		pport, err := freePort()
		if err != nil {
			return err
		}
		paddr := "127.0.0.1:" + strconv.Itoa(pport)
		srv, err := spawnNode(ctx, cfg.SpawnCorkboard, cfg.TempDir, cfg.Keep, store, id, "-pprof", paddr)
		if err != nil {
			return err
		}
		srv.pprofBase = "http://" + paddr
		a, err := newAPI(srv.base, 64)
		if err != nil {
			srv.stop()
			return err
		}
		n := &manyNode{srv: srv, api: a, probe: newProber(srv.PID())}
		nodes = append(nodes, n)
		// Sessions live in the database: the first node's works on all.
		a.session = session
		if !a.sessionValid(ctx) {
			if err := a.login(ctx, cfg.Email, srv.outbox()); err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			session = a.session
		}
		log.Info("node started", "node", id, "url", srv.base, "pid", srv.PID(), "placed", placed[i])
	}
	for _, n := range nodes {
		n.probe.sample(&n.idle)
	}

	ids := make([]string, boards)
	for b := range ids {
		ids[b] = boardName(prefix, b)
	}
	log.Info("claiming boards", "boards", boards)
	if err := forEach(ctx, ids, 16, nodes[0].api.claim); err != nil {
		return err
	}

	bases := make([]string, len(nodes))
	for i, n := range nodes {
		bases[i] = n.srv.base
	}
	first, count := splitWorkers(cfg.Conns, k)
	specs := make([]workerSpec, k)
	for w := range specs {
		specs[w] = workerSpec{Nodes: bases, Session: session, Prefix: prefix, First: first[w], Count: count[w], PerBoard: mf.perBoard,
			SourceAddrs: mf.sourceAddrs, DialConcurrency: cfg.DialConcurrency, SettleMaxMs: cfg.SettleMax.Milliseconds()}
	}
	log.Info("opening idle connections", "conns", cfg.Conns, "workers", k, "nodes", nc.Nodes)
	start := time.Now()
	pool, err := startWorkers(specs, nc.Nodes)
	if err != nil {
		return err
	}
	defer pool.stop()
	t, err := pool.wait(ctx, "opening the connections", cfg.ConnectTimeout, func(t workerTotals) bool { return t.Opened == t.Workers })
	mr.ConnectS = time.Since(start).Seconds()
	mr.Connected, mr.RemoteConns, mr.Failed = t.Connected(), t.Remote, t.Failed
	mr.Errors, mr.FirstError = t.Errors, t.FirstError
	if err != nil {
		return err
	}
	log.Info("connections open", "connected", t.Connected(), "failed", t.Failed, "perNode", t.PerNode, "seconds", mr.ConnectS)

	start = time.Now()
	if err := pool.send("settle"); err != nil {
		return err
	}
	if _, err := pool.wait(ctx, "settling", cfg.SettleMax+time.Minute, func(t workerTotals) bool { return t.Settled == t.Workers }); err != nil {
		return err
	}
	mr.SettleS = time.Since(start).Seconds()
	cpu0 := make([]time.Duration, len(nodes))
	for i, n := range nodes {
		cpu0[i] = n.probe.cpu()
	}
	holdStart := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(mf.hold):
	}
	held := time.Since(holdStart)
	mr.LoadAvg = loadAverage()
	t, _ = pool.totals()
	mr.WorkerRSS = pool.rss()
	for i, n := range nodes {
		nh := &NodeHeld{Node: fmt.Sprintf("node%d", i+1), PID: n.srv.PID(), Placed: placed[i], Connected: t.PerNode[i]}
		if cpu1 := n.probe.cpu(); cpu0[i] >= 0 && cpu1 >= 0 && held > 0 {
			nh.HoldCPUPercent = 100 * float64(cpu1-cpu0[i]) / float64(held)
		}
		var h *ProcSample
		n.probe.sample(&h)
		if h != nil && n.idle != nil {
			nh.RSSIdle, nh.RSSHeld = n.idle.RSSBytes, h.RSSBytes
			if nh.Connected > 0 {
				nh.BytesPerConn = float64(nh.RSSHeld-nh.RSSIdle) / float64(nh.Connected)
			}
		}
		nh.Goroutines = goroutineCount(ctx, n.srv.pprofBase)
		nh.MemStats = memStats(ctx, n.srv.pprofBase)
		mr.PerNode = append(mr.PerNode, nh)
		mr.RSSIdle += nh.RSSIdle
		mr.RSSHeld += nh.RSSHeld
		mr.Goroutines += nh.Goroutines
	}
	if mr.Connected > 0 {
		mr.BytesPerConn = float64(mr.RSSHeld-mr.RSSIdle) / float64(mr.Connected)
	}
	mr.Errors, mr.FirstError = t.Errors, t.FirstError
	log.Info("held", "conns", mr.Connected, "rssMiB", mr.RSSHeld>>20, "bytesPerConn", int(mr.BytesPerConn), "goroutines", mr.Goroutines)

	mr.Pushes, err = pushEveryBoardHome(ctx, nodes, pool, prefix, boards, cfg.Drain, log)
	if t, _ := pool.totals(); t.Errors > mr.Errors {
		mr.Errors, mr.FirstError = t.Errors, t.FirstError
	}
	return err
}

// pushEveryBoardHome pushes one note to each board on its home node and
// waits (at most drain after the last push is answered) until every
// connection has received a changes message.
func pushEveryBoardHome(ctx context.Context, nodes []*manyNode, pool *workerPool, prefix string, boards int, drain time.Duration, log *slog.Logger) (*NodesPushCheck, error) {
	t, _ := pool.totals()
	pc := &NodesPushCheck{Boards: boards, Conns: t.Connected(), RemoteConns: t.Remote, LoadAvg: loadAverage()}
	items := make([]string, boards)
	for b := range items {
		items[b] = strconv.Itoa(b)
	}
	body, err := json.Marshal(notePush(marker{Writer: 0, Seq: 1, SentNs: 1}))
	if err != nil {
		return pc, err
	}
	log.Info("pushing one note to every board, each on its home node", "boards", boards)
	start := time.Now()
	var errs atomic.Int64
	_ = forEach(ctx, items, 32, func(ctx context.Context, item string) error {
		b, _ := strconv.Atoi(item)
		if _, err := nodes[homeNode(b, len(nodes))].api.do(ctx, "POST", "/api/boards/"+boardName(prefix, b)+"/sync", body, nil); err != nil {
			errs.Add(1)
		}
		return nil
	})
	pc.PushesS = time.Since(start).Seconds()
	pc.Errors = errs.Load()
	t, werr := pool.wait(ctx, "deliveries", drain, func(t workerTotals) bool { return t.Pushed() >= int64(t.Connected()) })
	pc.Received, pc.ReceivedRemote = t.Pushed(), t.PushedRemote
	pc.Missing = int64(pc.Conns) - pc.Received
	if t.LastPushNs > 0 {
		pc.FirstToLastS = float64(t.LastPushNs-start.UnixNano()) / 1e9
	}
	log.Info("pushes received", "connections", pc.Received, "of", pc.Conns, "overBus", pc.ReceivedRemote, "seconds", pc.FirstToLastS)
	if werr != nil && ctx.Err() == nil {
		// Missing deliveries are the report's to show, not a failure of
		// the run.
		log.Warn("not every connection received the push", "err", werr)
		return pc, nil
	}
	return pc, ctx.Err()
}

// printMemoryNodes writes the memory-nodes report.
func printMemoryNodes(w io.Writer, mr *MemoryNodesReport) {
	fmt.Fprintf(w, "\nidle connections on %d node(s) (%s), opened by %d worker(s), %d per board, from %d source addresses, open-file limit %d per process\n",
		mr.Nodes, mr.Store, mr.Workers, mr.PerBoard, mr.SourceAddrs, mr.OpenFiles)
	fmt.Fprintf(w, "%-8s %8s %8s %9s %10s %10s %10s %10s %9s\n", "node", "placed", "held", "RSS idle", "RSS held", "B/conn", "goroutines", "HeapInuse", "hold CPU")
	for _, n := range mr.PerNode {
		fmt.Fprintf(w, "%-8s %8d %8d %6.1fMiB %7.1fMiB %10.0f %10d %7.1fMiB %8.1f%%\n",
			n.Node, n.Placed, n.Connected, mibOf(n.RSSIdle), mibOf(n.RSSHeld), n.BytesPerConn, n.Goroutines, mibOf(n.MemStats["HeapInuse"]), n.HoldCPUPercent)
	}
	fmt.Fprintf(w, "%-8s %8d %8d %6.1fMiB %7.1fMiB %10.0f %10d\n", "total", mr.Conns, mr.Connected, mibOf(mr.RSSIdle), mibOf(mr.RSSHeld), mr.BytesPerConn, mr.Goroutines)
	fmt.Fprintf(w, "%d boards; %d connections held (%d on another node than their board's home), %d failed, %d errors; connected in %.1fs, settled in %.1fs, held %.0fs; load %.2f %.2f %.2f\n",
		mr.Boards, mr.Connected, mr.RemoteConns, mr.Failed, mr.Errors, mr.ConnectS, mr.SettleS, mr.HoldS, mr.LoadAvg[0], mr.LoadAvg[1], mr.LoadAvg[2])
	if mr.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n", mr.FirstError)
	}
	if p := mr.Pushes; p != nil {
		fmt.Fprintf(w, "push to every board on its home node (%d boards, load %.2f): %d of %d connections received it (%d of %d over the bus; %d missing, %d push errors); pushes answered in %.1fs, first push to last delivery %.1fs\n",
			p.Boards, p.LoadAvg[0], p.Received, p.Conns, p.ReceivedRemote, p.RemoteConns, p.Missing, p.Errors, p.PushesS, p.FirstToLastS)
	}
	if len(mr.WorkerRSS) > 0 {
		fmt.Fprintf(w, "workers' RSS with every connection held (the clients' side):")
		for _, rss := range mr.WorkerRSS {
			fmt.Fprintf(w, " %.1f MiB", mibOf(rss))
		}
		fmt.Fprintln(w)
	}
}
