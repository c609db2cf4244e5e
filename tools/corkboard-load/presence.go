package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// The presence mode (issue 26, "Joining scales linearly"): -conns sockets
// of one person join one board, the server restarts and they all
// reconnect, then all but one leave. Each phase is timed from its start
// until every socket has its hello and shows the count the board should
// have (join, reconnect: -conns; leave: the one left shows 1), with the
// server's CPU from /proc/<pid>/stat over the same window. It runs against
// -spawn-corkboard and, with -presence-baseline, against a second binary
// (an older build) in the same invocation, alternating which goes first
// from one round to the next.
//
// A socket's count is the server's word for it, whatever the protocol: a
// server with presence batches says it (hello's presentCount + 1, then
// each presence message's count); an older one sent a join or leave per
// connection and a hello listing everyone, so the socket counts those.
// Sockets read with a byte scan, never a JSON decode per message: the
// older server sends millions of them.

// PresenceReport is what the presence mode measured.
type PresenceReport struct {
	Conns int            `json:"conns"`
	Runs  []*PresenceRun `json:"runs"`
}

// PresenceRun is the three phases against one server binary.
type PresenceRun struct {
	Target  string        `json:"target"`
	Binary  string        `json:"binary"`
	LoadAvg [3]float64    `json:"loadAvgAtStart"`
	Join    PresencePhase `json:"join"`
	Restart PresencePhase `json:"reconnectAfterRestart"`
	Leave   PresencePhase `json:"leave"`
	// StopS is how long the server took to stop (SIGTERM to exit) before
	// the restart.
	StopS float64 `json:"stopSeconds"`
}

// PresencePhase is one phase: how long until the count settled, and the
// CPU the server and the tool spent meanwhile.
type PresencePhase struct {
	Settled bool    `json:"settled"`
	WallS   float64 `json:"wallSeconds"`
	// ServerCPUS is the server's user + system time over the phase (for
	// the restart: the new process's, from its start).
	ServerCPUS float64 `json:"serverCpuSeconds"`
	ToolCPUS   float64 `json:"toolCpuSeconds"`
	// Messages is what the sockets received during the phase.
	Messages int64 `json:"messages"`
	// AtTarget is how many sockets showed the count when the phase ended.
	AtTarget   int64  `json:"atTarget"`
	Errors     int64  `json:"errors"`
	FirstError string `json:"firstError,omitempty"`
}

// presenceFlags are the presence mode's own flags; it also reads -conns,
// -spawn-corkboard, -dial-concurrency, -tmp, -keep and -email.
type presenceFlags struct {
	baseline     string
	runs         int
	phaseTimeout time.Duration
}

func addPresenceFlags(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}, p *presenceFlags) {
	fs.StringVar(&p.baseline, "presence-baseline", "", "presence: a second corkboard binary (an older build) to run the same phases against, alternating")
	fs.IntVar(&p.runs, "presence-runs", 1, "presence: rounds (each runs every binary once)")
	fs.DurationVar(&p.phaseTimeout, "presence-phase-timeout", 3*time.Minute, "presence: bound on one phase; past it the phase is reported unsettled")
}

func (cfg *Config) checkPresence() error {
	if cfg.SpawnCorkboard == "" {
		return fmt.Errorf("-mode presence needs -spawn-corkboard (it restarts the server itself)")
	}
	if cfg.Presence.runs < 1 || cfg.Presence.runs > 20 {
		return fmt.Errorf("-presence-runs must be between 1 and 20")
	}
	if cfg.Conns < 2 {
		return fmt.Errorf("-mode presence needs -conns of at least 2")
	}
	return nil
}

// runPresence runs the rounds and fills rep.Presence.
func runPresence(ctx context.Context, cfg *Config, rep *Report, log *slog.Logger) error {
	pr := &PresenceReport{Conns: cfg.Conns}
	rep.Presence = pr
	type target struct{ name, bin string }
	targets := []target{{"this", cfg.SpawnCorkboard}}
	if cfg.Presence.baseline != "" {
		targets = append(targets, target{"baseline", cfg.Presence.baseline})
	}
	for round := range cfg.Presence.runs {
		order := targets
		if round%2 == 1 && len(targets) == 2 {
			order = []target{targets[1], targets[0]}
		}
		for _, t := range order {
			log.Info("presence run", "round", round+1, "target", t.name, "binary", t.bin, "conns", cfg.Conns)
			run, err := presenceRun(ctx, cfg, t.bin, log)
			if run != nil {
				run.Target = t.name
				pr.Runs = append(pr.Runs, run)
				log.Info("presence run done", "target", t.name, "join s", run.Join.WallS, "join cpu s", run.Join.ServerCPUS,
					"reconnect s", run.Restart.WallS, "reconnect cpu s", run.Restart.ServerCPUS, "leave s", run.Leave.WallS, "leave cpu s", run.Leave.ServerCPUS)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// presenceRun is the three phases against a fresh server of bin.
func presenceRun(ctx context.Context, cfg *Config, bin string, log *slog.Logger) (*PresenceRun, error) {
	run := &PresenceRun{Binary: bin, LoadAvg: loadAverage()}
	srv, err := spawnCorkboard(ctx, bin, false, cfg.TempDir, cfg.Keep)
	if err != nil {
		return nil, err
	}
	defer func() { srv.stop() }()
	a, err := newAPI(srv.base, 8)
	if err != nil {
		return nil, err
	}
	if err := a.login(ctx, cfg.Email, srv.outbox()); err != nil {
		return nil, err
	}
	boardID := newPrefix() + "-presence"
	if err := a.claim(ctx, boardID); err != nil {
		return nil, err
	}
	n := cfg.Conns
	ps := newPresenceSet(ctx, a, boardID, n, cfg.DialConcurrency)
	defer ps.close()

	// Join: every socket dialled, dialConcurrency at a time.
	probe := newProber(srv.PID())
	run.Join = ps.phase(ctx, probe, cfg.Presence.phaseTimeout, func() { ps.openAll(ctx) }, ps.allAtTarget)
	log.Info("joined", "settled", run.Join.Settled, "s", run.Join.WallS, "server cpu s", run.Join.ServerCPUS)

	// Reconnect after a restart: the server closes every socket going
	// away; each reconnects at once and then every 100-200 ms until the
	// new process answers.
	ps.reconnect.Store(true)
	if err := srv.restart(ctx); err != nil {
		return run, err
	}
	run.StopS = srv.stoppedIn.Seconds()
	probe = newProber(srv.PID())
	run.Restart = ps.phaseFrom(ctx, probe, srv.startedAt, 0, cfg.Presence.phaseTimeout, nil, ps.allAtTarget)
	log.Info("reconnected", "settled", run.Restart.Settled, "s", run.Restart.WallS, "server cpu s", run.Restart.ServerCPUS, "stop s", run.StopS)

	// Leave: all but the first close (a close frame each, as a browser tab
	// does), dialConcurrency at a time; the first must come to show 1.
	ps.reconnect.Store(false)
	run.Leave = ps.phase(ctx, probe, cfg.Presence.phaseTimeout, func() { ps.closeAllBut(0) }, func() bool { return ps.conns[0].state.Load() == 1 })
	if run.Leave.Settled {
		run.Leave.AtTarget = 1
	}
	log.Info("left", "settled", run.Leave.Settled, "s", run.Leave.WallS, "server cpu s", run.Leave.ServerCPUS)
	return run, nil
}

// presenceSet is the sockets of one run.
type presenceSet struct {
	ctx     context.Context
	cancel  context.CancelFunc
	a       *api
	pool    *sourcePool
	boardID string
	conns   []*presenceConn
	target  int64
	// atTarget is how many sockets have their hello and show target.
	atTarget  atomic.Int64
	msgs      atomic.Int64
	errs      atomic.Int64
	firstErr  atomic.Pointer[string]
	reconnect atomic.Bool
	sem       chan struct{} // handshakes in flight
	wg        sync.WaitGroup
}

// presenceConn is one socket; state is the count it shows, -1 before
// its hello.
type presenceConn struct {
	mu     sync.Mutex
	conn   *websocket.Conn
	state  atomic.Int64
	closed atomic.Bool // closed by the tool: no reconnect
}

func newPresenceSet(ctx context.Context, a *api, boardID string, n, conc int) *presenceSet {
	ps := &presenceSet{a: a, pool: newSourcePool(8), boardID: boardID, target: int64(n), sem: make(chan struct{}, max(conc, 1))}
	ps.ctx, ps.cancel = context.WithCancel(ctx)
	for range n {
		pc := &presenceConn{}
		pc.state.Store(-1)
		ps.conns = append(ps.conns, pc)
	}
	return ps
}

func (ps *presenceSet) error(err error) {
	ps.errs.Add(1)
	msg := err.Error()
	ps.firstErr.CompareAndSwap(nil, &msg)
}

func (ps *presenceSet) allAtTarget() bool { return ps.atTarget.Load() == int64(len(ps.conns)) }

// set moves pc's count, keeping atTarget.
func (ps *presenceSet) set(pc *presenceConn, v int64) {
	old := pc.state.Swap(v)
	if old == ps.target && v != ps.target {
		ps.atTarget.Add(-1)
	} else if old != ps.target && v == ps.target {
		ps.atTarget.Add(1)
	}
}

func (ps *presenceSet) add(pc *presenceConn, d int64) {
	for {
		old := pc.state.Load()
		if old < 0 {
			return // before hello: not counted
		}
		if pc.state.CompareAndSwap(old, old+d) {
			if old == ps.target {
				ps.atTarget.Add(-1)
			}
			if old+d == ps.target {
				ps.atTarget.Add(1)
			}
			return
		}
	}
}

// phase runs start and waits until done, timing the window from before
// start.
func (ps *presenceSet) phase(ctx context.Context, probe *prober, timeout time.Duration, start func(), done func() bool) PresencePhase {
	return ps.phaseFrom(ctx, probe, time.Now(), probe.cpu(), timeout, start, done)
}

// phaseFrom is phase with the window starting at t0 with the server at
// cpu0.
func (ps *presenceSet) phaseFrom(ctx context.Context, probe *prober, t0 time.Time, cpu0 time.Duration, timeout time.Duration, start func(), done func() bool) PresencePhase {
	tool0, msgs0, errs0 := selfCPU(), ps.msgs.Load(), ps.errs.Load()
	ps.firstErr.Store(nil)
	if start != nil {
		go start()
	}
	var ph PresencePhase
	deadline := time.NewTimer(timeout - time.Since(t0))
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
wait:
	for !done() {
		select {
		case <-tick.C:
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	ph.Settled = done()
	ph.WallS = time.Since(t0).Seconds()
	if cpu := probe.cpu(); cpu >= 0 && cpu0 >= 0 {
		ph.ServerCPUS = (cpu - cpu0).Seconds()
	}
	ph.ToolCPUS = (selfCPU() - tool0).Seconds()
	ph.Messages = ps.msgs.Load() - msgs0
	ph.AtTarget = ps.atTarget.Load()
	ph.Errors = ps.errs.Load() - errs0
	if e := ps.firstErr.Load(); e != nil {
		ph.FirstError = *e
	}
	return ph
}

// openAll dials every socket, the set's concurrency at a time, and starts
// their readers.
func (ps *presenceSet) openAll(ctx context.Context) {
	for _, pc := range ps.conns {
		ps.wg.Add(1)
		go ps.serve(pc)
	}
}

// serve keeps pc connected: it dials, reads until the socket ends, and
// while the set reconnects dials again.
func (ps *presenceSet) serve(pc *presenceConn) {
	defer ps.wg.Done()
	var buf []byte
	for ps.ctx.Err() == nil && !pc.closed.Load() {
		c, err := ps.dial()
		if err != nil {
			if ps.ctx.Err() == nil && !ps.reconnect.Load() {
				ps.error(err)
				return
			}
			// The server is restarting: try again shortly, with jitter so
			// that retries spread.
			select {
			case <-time.After(100*time.Millisecond + rand.N(100*time.Millisecond)):
			case <-ps.ctx.Done():
			}
			continue
		}
		pc.mu.Lock()
		pc.conn = c
		closed := pc.closed.Load()
		pc.mu.Unlock()
		if closed {
			c.CloseNow()
			return
		}
		ps.read(pc, c, &buf)
		ps.set(pc, -1)
		if !ps.reconnect.Load() {
			return
		}
	}
}

// dial opens the board's live channel from one of the source addresses,
// a handshake slot at a time.
func (ps *presenceSet) dial() (*websocket.Conn, error) {
	select {
	case ps.sem <- struct{}{}:
	case <-ps.ctx.Done():
		return nil, ps.ctx.Err()
	}
	defer func() { <-ps.sem }()
	ctx, cancel := context.WithTimeout(ps.ctx, 30*time.Second)
	defer cancel()
	h := http.Header{}
	h.Set("Origin", ps.a.origin)
	h.Set("Cookie", "session="+ps.a.session)
	url := "ws" + strings.TrimPrefix(ps.a.base, "http") + "/api/boards/" + ps.boardID + "/live"
	c, res, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: ps.pool.client(), HTTPHeader: h})
	if err != nil {
		if res != nil {
			return nil, fmt.Errorf("live: %d: %w", res.StatusCode, err)
		}
		return nil, fmt.Errorf("live: %w", err)
	}
	c.SetReadLimit(maxMessage)
	return c, nil
}

var (
	presencePrefix = []byte(`{"type":"presence"`)
	joinPrefix     = []byte(`{"type":"join"`)
	leavePrefix    = []byte(`{"type":"leave"`)
	countKey       = []byte(`"count":`)
	presentCount   = []byte(`"presentCount":`)
	entryStart     = []byte(`{"id":`)
)

// read reads c until it ends, moving pc's count.
func (ps *presenceSet) read(pc *presenceConn, c *websocket.Conn, buf *[]byte) {
	stop := closeOnDone(ps.ctx, c)
	defer stop()
	for {
		data, err := readMessage(c, buf)
		if err != nil {
			if ps.ctx.Err() == nil && !pc.closed.Load() && !ps.reconnect.Load() {
				ps.error(fmt.Errorf("connection ended: %w", err))
			}
			return
		}
		ps.msgs.Add(1)
		switch {
		case bytes.HasPrefix(data, presencePrefix):
			if v, ok := numberAfter(data, countKey, true); ok && pc.state.Load() >= 0 {
				ps.set(pc, v)
			}
		case bytes.HasPrefix(data, joinPrefix):
			ps.add(pc, 1)
		case bytes.HasPrefix(data, leavePrefix):
			ps.add(pc, -1)
		case bytes.HasPrefix(data, helloPrefix):
			if v, ok := numberAfter(data, presentCount, false); ok {
				ps.set(pc, v+1)
			} else {
				// An older server lists everyone: one entry per other
				// connection, plus "you".
				ps.set(pc, int64(bytes.Count(data, entryStart)))
			}
		}
	}
}

// numberAfter parses the integer after key in data (its last occurrence
// when last).
func numberAfter(data, key []byte, last bool) (int64, bool) {
	i := bytes.Index(data, key)
	if last {
		i = bytes.LastIndex(data, key)
	}
	if i < 0 {
		return 0, false
	}
	rest := data[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v, err == nil
}

// closeAllBut closes every socket but keep's, with a close frame, the
// set's concurrency at a time.
func (ps *presenceSet) closeAllBut(keep int) {
	var wg sync.WaitGroup
	for i, pc := range ps.conns {
		if i == keep {
			continue
		}
		pc.closed.Store(true)
		pc.mu.Lock()
		c := pc.conn
		pc.mu.Unlock()
		if c == nil {
			continue
		}
		ps.sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-ps.sem }()
			_ = c.Close(websocket.StatusNormalClosure, "")
		}()
	}
	wg.Wait()
}

// close ends every socket and waits for their goroutines.
func (ps *presenceSet) close() {
	ps.cancel()
	ps.wg.Wait()
}

// restart stops the server (SIGTERM, as a deploy does) and starts the same
// binary with the same flags and data again; stoppedIn and startedAt say
// when.
func (s *spawned) restart(ctx context.Context) error {
	t := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.stoppedIn = time.Since(t)
	if s.log != nil {
		s.log.Close()
	}
	s.cmd = exec.Command(s.cmd.Path, s.cmd.Args[1:]...)
	s.name = filepath.Base(s.name) + "-restarted"
	s.startedAt = time.Now()
	return s.start(ctx, s.base+"/api/auth/me")
}

// printPresence prints the presence mode's table.
func printPresence(w io.Writer, pr *PresenceReport) {
	fmt.Fprintf(w, "\npresence: %d sockets on one board\n", pr.Conns)
	fmt.Fprintln(w, "target\tphase\tsettled\twall s\tserver CPU s\ttool CPU s\tmessages\tat target\terrors\tload avg")
	for _, r := range pr.Runs {
		for _, p := range []struct {
			name string
			ph   PresencePhase
		}{{"join", r.Join}, {"reconnect", r.Restart}, {"leave", r.Leave}} {
			fmt.Fprintf(w, "%s\t%s\t%v\t%.2f\t%.2f\t%.2f\t%d\t%d\t%d\t%.2f\n", r.Target, p.name, p.ph.Settled, p.ph.WallS, p.ph.ServerCPUS, p.ph.ToolCPUS, p.ph.Messages, p.ph.AtTarget, p.ph.Errors, r.LoadAvg[0])
			if p.ph.FirstError != "" {
				fmt.Fprintf(w, "  first error: %s\n", p.ph.FirstError)
			}
		}
	}
}
