package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The memory mode: how much server memory an idle live connection holds.
// It opens idle connections in steps (5,000, 20,000, 50,000 by default),
// spread over boards of -per-board connections each (every join announced
// to the others: presence on), and samples the server's RSS at each step;
// then it pushes one note to every board and checks that every connection
// gets it. It does the same steps against y-websocket (each client joins
// with sync step 1 and an awareness state, as a browser tab does) in the
// same run. Connections come from several loopback source addresses
// (127.0.0.x): one address has only the ephemeral port range (about 28,000
// ports) to connect from.

// MemoryReport is what the memory mode measured.
type MemoryReport struct {
	PerBoard    int           `json:"perBoard"`
	SourceAddrs int           `json:"sourceAddresses"`
	Steps       []*MemoryStep `json:"steps"`
	// Pushes is the check that every Corkboard connection still gets
	// pushes once the last step is held.
	Pushes *MemoryPushCheck `json:"pushes,omitempty"`
}

// MemoryStep is one server holding Conns idle connections.
type MemoryStep struct {
	Target    string     `json:"target"`
	Conns     int        `json:"conns"`
	Connected int        `json:"connected"`
	Boards    int        `json:"boards"`
	ConnectS  float64    `json:"connectSeconds"`
	LoadAvg   [3]float64 `json:"loadAvg"`
	// RSSIdle is the server's RSS before any connection of the run;
	// RSSHeld with this step's connections open, settled and held for
	// -hold.
	RSSIdle int64 `json:"rssIdleBytes"`
	RSSHeld int64 `json:"rssHeldBytes"`
	// BytesPerConn is (RSSHeld - RSSIdle) / Connected.
	BytesPerConn float64 `json:"bytesPerConn"`
	// Goroutines is the server's goroutine count (Go servers started with
	// a profiler only; 0 when unknown).
	Goroutines int `json:"goroutines,omitempty"`
	// MemStats are the Go server's runtime.MemStats figures (HeapInuse,
	// StackInuse, HeapSys, NextGC, …), from its profiler.
	MemStats   map[string]int64 `json:"memStats,omitempty"`
	HeapFile   string           `json:"heapProfile,omitempty"`
	Errors     int64            `json:"errors"`
	FirstError string           `json:"firstError,omitempty"`
}

// MemoryPushCheck is one push to every board, and how many connections
// received it.
type MemoryPushCheck struct {
	Boards   int     `json:"boards"`
	Conns    int     `json:"conns"`
	Received int64   `json:"received"`
	Missing  int64   `json:"missing"`
	Errors   int64   `json:"errors"`
	WaitS    float64 `json:"waitSeconds"`
}

// memoryFlags are the memory mode's own flags.
type memoryFlags struct {
	steps       string
	ywsSteps    string
	perBoard    int
	sourceAddrs int
	hold        time.Duration
	heapProfile string
}

func (m *memoryFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.StringVar(&m.steps, "memory-steps", "5000,20000,50000", "memory: idle Corkboard connections to hold, in steps")
	fs.StringVar(&m.ywsSteps, "yws-memory-steps", "5000,20000", "memory: the same steps against y-websocket (empty: none)")
	fs.IntVar(&m.perBoard, "per-board", 10, "memory: connections per board (room)")
	fs.IntVar(&m.sourceAddrs, "source-addrs", 8, "memory: loopback source addresses to connect from (127.0.0.1 up)")
	fs.DurationVar(&m.hold, "hold", 5*time.Second, "memory: how long each step is held before its RSS is read")
	fs.StringVar(&m.heapProfile, "heapprofile", "", "memory, with -spawn-corkboard: write the server's heap profile at each step to <this>-<conns>.pprof")
}

// parseSteps reads "5000,20000" into increasing counts.
func parseSteps(s string) ([]int, error) {
	var steps []int
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 200_000 || (len(steps) > 0 && n <= steps[len(steps)-1]) {
			return nil, fmt.Errorf("steps %q: want increasing counts from 1 to 200000", s)
		}
		steps = append(steps, n)
	}
	return steps, nil
}

func (m *memoryFlags) check() error {
	if _, err := parseSteps(m.steps); err != nil {
		return fmt.Errorf("-memory-steps: %w", err)
	}
	if _, err := parseSteps(m.ywsSteps); err != nil {
		return fmt.Errorf("-yws-memory-steps: %w", err)
	}
	if m.perBoard < 1 || m.perBoard > 10_000 {
		return fmt.Errorf("-per-board must be 1 to 10000")
	}
	if m.sourceAddrs < 1 || m.sourceAddrs > 250 {
		return fmt.Errorf("-source-addrs must be 1 to 250")
	}
	if m.hold < 0 || m.hold > time.Hour {
		return fmt.Errorf("-hold must be 0 to 1h")
	}
	return nil
}

// sourcePool hands out HTTP clients that connect from 127.0.0.1,
// 127.0.0.2, …, in turn.
type sourcePool struct {
	clients []*http.Client
	next    atomic.Uint64
}

func newSourcePool(n int) *sourcePool {
	p := &sourcePool{}
	for k := range n {
		d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+k))}}
		p.clients = append(p.clients, &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: d.DialContext}})
	}
	return p
}

func (p *sourcePool) client() *http.Client {
	return p.clients[p.next.Add(1)%uint64(len(p.clients))]
}

// idleConn is one held connection: its reader counts messages and notes
// whether a changes message (a push) came.
type idleConn struct {
	conn   *websocket.Conn
	pushed atomic.Bool
}

// idleSet is the connections of one server.
type idleSet struct {
	conns    []*idleConn
	msgs     atomic.Int64
	pushed   atomic.Int64
	errs     atomic.Int64
	firstErr atomic.Pointer[string]
	readers  sync.WaitGroup
	readCtx  context.Context
	stop     context.CancelFunc
	isPush   func(data []byte) bool
}

func newIdleSet(ctx context.Context, isPush func([]byte) bool) *idleSet {
	s := &idleSet{isPush: isPush}
	s.readCtx, s.stop = context.WithCancel(ctx)
	return s
}

func (s *idleSet) error(err error) {
	s.errs.Add(1)
	msg := err.Error()
	s.firstErr.CompareAndSwap(nil, &msg)
}

// add starts reading c until the set is closed.
func (s *idleSet) add(c *websocket.Conn) {
	ic := &idleConn{conn: c}
	s.conns = append(s.conns, ic)
	s.readers.Add(1)
	go func() {
		defer s.readers.Done()
		stop := closeOnDone(s.readCtx, c)
		defer stop()
		var buf []byte
		for {
			data, err := readMessage(c, &buf)
			if err != nil {
				if s.readCtx.Err() == nil {
					s.error(fmt.Errorf("connection ended: %w", err))
				}
				return
			}
			s.msgs.Add(1)
			if s.isPush(data) && !ic.pushed.Swap(true) {
				s.pushed.Add(1)
			}
		}
	}()
}

// close ends every connection and waits for the readers.
func (s *idleSet) close() {
	s.stop()
	s.readers.Wait()
}

// grow dials connections until the set holds n, conc at a time; dial
// makes connection i. It returns how many failed.
func (s *idleSet) grow(ctx context.Context, n, conc int, dial func(ctx context.Context, i int) (*websocket.Conn, error)) {
	var mu sync.Mutex
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := len(s.conns); i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			s.error(ctx.Err())
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			c, err := dial(dctx, i)
			if err != nil {
				s.error(err)
				return
			}
			mu.Lock()
			s.add(c)
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// runMemory is the memory mode against Corkboard (a, pid, pprofBase) and
// then y-websocket.
func runMemory(ctx context.Context, cfg *Config, rep *Report, a *api, pid int, pprofBase, prefix string, log *slog.Logger) error {
	mf := &cfg.Memory
	steps, _ := parseSteps(mf.steps)
	ywsSteps, _ := parseSteps(mf.ywsSteps)
	mr := &MemoryReport{PerBoard: mf.perBoard, SourceAddrs: mf.sourceAddrs}
	rep.Memory = mr
	pool := newSourcePool(mf.sourceAddrs)

	// Corkboard.
	probe := newProber(pid)
	var idle *ProcSample
	probe.sample(&idle)
	set := newIdleSet(ctx, func(data []byte) bool { return bytes.HasPrefix(data, changesPrefix) })
	claimed := 0
	boardID := func(b int) string { return fmt.Sprintf("%s-%d", prefix, b) }
	var last int
	for _, n := range steps {
		boards := (n + mf.perBoard - 1) / mf.perBoard
		ids := make([]string, 0, boards-claimed)
		for b := claimed; b < boards; b++ {
			ids = append(ids, boardID(b))
		}
		log.Info("claiming boards", "boards", len(ids))
		if err := forEach(ctx, ids, 16, a.claim); err != nil {
			set.close()
			return err
		}
		claimed = boards
		log.Info("opening idle connections", "server", "corkboard", "to", n)
		start := time.Now()
		set.grow(ctx, n, cfg.DialConcurrency, func(ctx context.Context, i int) (*websocket.Conn, error) {
			return dialLiveFrom(ctx, a, pool.client(), boardID(i/mf.perBoard))
		})
		st := &MemoryStep{Target: "corkboard", Conns: n, Connected: len(set.conns), Boards: boards, ConnectS: time.Since(start).Seconds()}
		holdStep(ctx, set, mf.hold, cfg.SettleMax)
		st.LoadAvg = loadAverage()
		fillRSS(st, probe, idle)
		if pprofBase != "" {
			st.Goroutines = goroutineCount(ctx, pprofBase)
			st.MemStats = memStats(ctx, pprofBase)
			if mf.heapProfile != "" {
				st.HeapFile = fmt.Sprintf("%s-%d.pprof", mf.heapProfile, n)
				if err := fetchToFile(ctx, pprofBase+"/debug/pprof/heap", st.HeapFile); err != nil {
					log.Warn("heap profile", "err", err)
				}
			}
		}
		st.Errors = set.errs.Load()
		if e := set.firstErr.Load(); e != nil {
			st.FirstError = *e
		}
		mr.Steps = append(mr.Steps, st)
		log.Info("step held", "conns", st.Connected, "rssMiB", st.RSSHeld>>20, "bytesPerConn", int(st.BytesPerConn), "goroutines", st.Goroutines)
		last = boards
	}
	if len(steps) > 0 {
		mr.Pushes = pushToEveryBoard(ctx, a, set, last, boardID, cfg.Drain, log)
	}
	set.close()

	// y-websocket, the same steps.
	if len(ywsSteps) == 0 {
		return nil
	}
	ywsBase, ywsPID := cfg.YWSURL, cfg.YWSPID
	if ywsBase == "" {
		srv, err := spawnYWS(ctx, cfg.YWSDir, cfg.TempDir, cfg.Keep)
		if err != nil {
			return err
		}
		defer srv.stop()
		ywsBase, ywsPID = "ws"+strings.TrimPrefix(srv.base, "http"), srv.PID()
		log.Info("y-websocket started", "url", ywsBase, "pid", ywsPID)
	}
	if _, err := checkLoopbackURL(ywsBase); err != nil {
		return err
	}
	yprobe := newProber(ywsPID)
	var yidle *ProcSample
	yprobe.sample(&yidle)
	yset := newIdleSet(ctx, func([]byte) bool { return false })
	defer yset.close()
	for _, n := range ywsSteps {
		log.Info("opening idle connections", "server", "y-websocket", "to", n)
		start := time.Now()
		yset.grow(ctx, n, cfg.DialConcurrency, func(ctx context.Context, i int) (*websocket.Conn, error) {
			return dialYWSAware(ctx, pool.client(), strings.TrimRight(ywsBase, "/")+"/"+prefix+"-y"+strconv.Itoa(i/mf.perBoard), uint64(1000+i))
		})
		st := &MemoryStep{Target: "y-websocket", Conns: n, Connected: len(yset.conns), Boards: (n + mf.perBoard - 1) / mf.perBoard, ConnectS: time.Since(start).Seconds()}
		holdStep(ctx, yset, mf.hold, cfg.SettleMax)
		st.LoadAvg = loadAverage()
		fillRSS(st, yprobe, yidle)
		st.Errors = yset.errs.Load()
		if e := yset.firstErr.Load(); e != nil {
			st.FirstError = *e
		}
		mr.Steps = append(mr.Steps, st)
		log.Info("step held", "server", "y-websocket", "conns", st.Connected, "rssMiB", st.RSSHeld>>20, "bytesPerConn", int(st.BytesPerConn))
	}
	return nil
}

// holdStep lets the join announcements die down, then holds for hold.
func holdStep(ctx context.Context, s *idleSet, hold, settleMax time.Duration) {
	settle(ctx, s.msgs.Load, 300*time.Millisecond, settleMax)
	t := time.NewTimer(hold)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func fillRSS(st *MemoryStep, probe *prober, idle *ProcSample) {
	var held *ProcSample
	probe.sample(&held)
	if idle == nil || held == nil {
		return
	}
	st.RSSIdle, st.RSSHeld = idle.RSSBytes, held.RSSBytes
	if st.Connected > 0 {
		st.BytesPerConn = float64(held.RSSBytes-idle.RSSBytes) / float64(st.Connected)
	}
}

// pushToEveryBoard pushes one note to each of the boards and waits (at
// most drain after the last push is answered) until every connection has
// received a changes message.
func pushToEveryBoard(ctx context.Context, a *api, s *idleSet, boards int, boardID func(int) string, drain time.Duration, log *slog.Logger) *MemoryPushCheck {
	pc := &MemoryPushCheck{Boards: boards, Conns: len(s.conns)}
	ids := make([]string, boards)
	for b := range ids {
		ids[b] = boardID(b)
	}
	log.Info("pushing one note to every board", "boards", boards)
	start := time.Now()
	var errs atomic.Int64
	_ = forEach(ctx, ids, 32, func(ctx context.Context, id string) error {
		body, err := json.Marshal(notePush(marker{Writer: 0, Seq: 1, SentNs: 1}))
		if err == nil {
			_, err = a.do(ctx, "POST", "/api/boards/"+id+"/sync", body, nil)
		}
		if err != nil {
			errs.Add(1)
		}
		return nil
	})
	waitUntil(ctx, drain, func() bool { return s.pushed.Load() >= int64(len(s.conns)) })
	pc.WaitS = time.Since(start).Seconds()
	pc.Received = s.pushed.Load()
	pc.Missing = int64(len(s.conns)) - pc.Received
	pc.Errors = errs.Load()
	log.Info("pushes received", "connections", pc.Received, "of", pc.Conns)
	return pc
}

// dialLiveFrom opens a board's live channel through client (one source
// address) and reads hello.
func dialLiveFrom(ctx context.Context, a *api, client *http.Client, boardID string) (*websocket.Conn, error) {
	h := http.Header{}
	h.Set("Origin", a.origin)
	h.Set("Cookie", "session="+a.session)
	url := "ws" + strings.TrimPrefix(a.base, "http") + "/api/boards/" + boardID + "/live"
	c, res, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client, HTTPHeader: h})
	if err != nil {
		if res != nil {
			return nil, fmt.Errorf("live %s: %d: %w", boardID, res.StatusCode, err)
		}
		return nil, fmt.Errorf("live %s: %w", boardID, err)
	}
	c.SetReadLimit(4 << 20)
	_, data, err := c.Read(ctx)
	if err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("live %s: read hello: %w", boardID, err)
	}
	if !bytes.HasPrefix(data, helloPrefix) {
		c.CloseNow()
		return nil, fmt.Errorf("live %s: first message is not hello: %.100s", boardID, data)
	}
	return c, nil
}

// dialYWSAware joins a y-websocket room as a browser tab with presence
// does: sync step 1 with an empty state vector, then an awareness update
// carrying the user's state.
func dialYWSAware(ctx context.Context, client *http.Client, url string, clientID uint64) (*websocket.Conn, error) {
	c, res, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		if res != nil {
			return nil, fmt.Errorf("y-websocket %s: %d: %w", url, res.StatusCode, err)
		}
		return nil, fmt.Errorf("y-websocket %s: %w", url, err)
	}
	c.SetReadLimit(4 << 20)
	if err := c.Write(ctx, websocket.MessageBinary, encodeSyncMessage(ySyncStep1, emptyStateVector)); err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("y-websocket %s: sync step 1: %w", url, err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, encodeAwareness(clientID, 1, fmt.Sprintf(`{"user":{"name":"load%d@example.com","color":"#30bced"}}`, clientID))); err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("y-websocket %s: awareness: %w", url, err)
	}
	return c, nil
}

// encodeAwareness is a y-protocol awareness message for one client: the
// message type, then as one length-prefixed array the count of clients
// (1), the client's ID, clock and JSON state.
func encodeAwareness(clientID, clock uint64, state string) []byte {
	var u []byte
	u = appendVarUint(u, 1)
	u = appendVarUint(u, clientID)
	u = appendVarUint(u, clock)
	u = appendVarUint(u, uint64(len(state)))
	u = append(u, state...)
	m := appendVarUint(nil, yMessageAwareness)
	m = appendVarUint(m, uint64(len(u)))
	return append(m, u...)
}

// goroutineCount reads the server's goroutine count from its profiler.
func goroutineCount(ctx context.Context, pprofBase string) int {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pprofBase+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return 0
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(res.Body, 256))
	line, _, _ := strings.Cut(string(head), "\n")
	n, _ := strconv.Atoi(strings.TrimPrefix(line, "goroutine profile: total "))
	return n
}

// memStats reads the runtime.MemStats lines ("# HeapInuse = 123") at the
// end of the server's heap profile in text form.
func memStats(ctx context.Context, pprofBase string) map[string]int64 {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pprofBase+"/debug/pprof/heap?debug=1", nil)
	if err != nil {
		return nil
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	out := map[string]int64{}
	for line := range strings.SplitSeq(string(body), "\n") {
		name, val, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
		if !ok || !strings.HasPrefix(line, "# ") {
			continue
		}
		if name == "Stack" { // "# Stack = StackInuse / StackSys"
			name = "StackInuse"
			val, _, _ = strings.Cut(val, " /")
		}
		switch name {
		case "HeapAlloc", "HeapInuse", "HeapIdle", "HeapReleased", "HeapSys", "StackInuse", "Sys", "NextGC", "NumGC":
			if n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err == nil {
				out[name] = n
			}
		}
	}
	return out
}

// fetchToFile GETs url (a loopback profiler) into file.
func fetchToFile(ctx context.Context, url, file string) error {
	if _, err := checkLoopbackURL(url); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	return fetchProfile(ctx, url, f, 2*time.Minute)
}

// printMemory writes the memory report as a table.
func printMemory(w io.Writer, mr *MemoryReport) {
	fmt.Fprintf(w, "\nidle connections (%d per board, from %d source addresses)\n", mr.PerBoard, mr.SourceAddrs)
	fmt.Fprintf(w, "%-12s %8s %9s %8s %9s %10s %10s %10s %10s %6s  %s\n", "server", "conns", "connected", "boards", "connect", "RSS idle", "RSS held", "B/conn", "goroutines", "errors", "load")
	for _, s := range mr.Steps {
		fmt.Fprintf(w, "%-12s %8d %9d %8d %8.1fs %7.1fMiB %7.1fMiB %10.0f %10d %6d  %.2f %.2f %.2f\n",
			s.Target, s.Conns, s.Connected, s.Boards, s.ConnectS, float64(s.RSSIdle)/(1<<20), float64(s.RSSHeld)/(1<<20), s.BytesPerConn, s.Goroutines, s.Errors, s.LoadAvg[0], s.LoadAvg[1], s.LoadAvg[2])
		if len(s.MemStats) > 0 {
			m := s.MemStats
			fmt.Fprintf(w, "  Go: HeapInuse %.1f MiB, StackInuse %.1f MiB, HeapIdle %.1f MiB (released %.1f), NextGC %.1f MiB, Sys %.1f MiB\n",
				mibOf(m["HeapInuse"]), mibOf(m["StackInuse"]), mibOf(m["HeapIdle"]), mibOf(m["HeapReleased"]), mibOf(m["NextGC"]), mibOf(m["Sys"]))
		}
		if s.FirstError != "" {
			fmt.Fprintf(w, "  first error: %s\n", s.FirstError)
		}
	}
	byTarget := map[string]map[int]float64{}
	for _, s := range mr.Steps {
		if byTarget[s.Target] == nil {
			byTarget[s.Target] = map[int]float64{}
		}
		byTarget[s.Target][s.Conns] = s.BytesPerConn
	}
	for n, c := range byTarget["corkboard"] {
		if y, ok := byTarget["y-websocket"][n]; ok && y > 0 {
			fmt.Fprintf(w, "bytes per connection at %d, Corkboard / y-websocket: %.2f\n", n, c/y)
		}
	}
	if p := mr.Pushes; p != nil {
		fmt.Fprintf(w, "push to every board (%d boards): %d of %d connections received it (%d missing, %d push errors) in %.1fs\n",
			p.Boards, p.Received, p.Conns, p.Missing, p.Errors, p.WaitS)
	}
}

func mibOf(n int64) float64 { return float64(n) / (1 << 20) }
