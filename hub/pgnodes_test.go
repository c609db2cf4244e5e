package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/rooms"
	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

// pgNode is one node on PostgreSQL: its own store (pool), its LISTEN/NOTIFY
// bus and its hub, which reads the store through reads (counted).
type pgNode struct {
	store *postgres.Store
	reads *countingStore
	bus   *postgres.Bus
	hub   *hub.Hub
}

// newPGNodes starts n nodes on one fresh database with board b1 claimed.
func newPGNodes(tb testing.TB, n int) []*pgNode {
	tb.Helper()
	return startPGNodes(tb, n, nil)
}

// startPGNodes is newPGNodes whose hubs listen through wrap(i, bus) when
// wrap is set (to hold a node's notes back).
func startPGNodes(tb testing.TB, n int, wrap func(i int, b hub.Bus) hub.Bus) []*pgNode {
	tb.Helper()
	return startPGNodesWith(tb, pgNodesOptions{n: n, wrap: wrap})
}

// pgNodesOptions set up the nodes of startPGNodesWith.
type pgNodesOptions struct {
	n    int
	wrap func(i int, b hub.Bus) hub.Bus // nil: the bus itself
	// lease is node i's hub.Options.Lease; nil: the default.
	lease func(i int) time.Duration
	// setup runs on the fresh database, b1 claimed, before any node starts.
	setup func(s *postgres.Store)
	// pollEvery is hub.Options.PollEvery; 0: none (tests call Tick).
	pollEvery time.Duration
}

func startPGNodesWith(tb testing.TB, o pgNodesOptions) []*pgNode {
	tb.Helper()
	dsn := pgtest.NewDatabase(tb)
	ctx := context.Background()
	var out []*pgNode
	for i := range o.n {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			tb.Fatal(err)
		}
		if i == 0 {
			if _, err := s.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
				tb.Fatal(err)
			}
			if o.setup != nil {
				o.setup(s)
			}
		}
		bus := s.NewBus(postgres.BusOptions{MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
		var hb hub.Bus = bus
		if o.wrap != nil {
			hb = o.wrap(i, bus)
		}
		var lease time.Duration
		if o.lease != nil {
			lease = o.lease(i)
		}
		reads := &countingStore{SyncStore: s}
		poll := o.pollEvery
		if poll == 0 {
			poll = -1
		}
		h := hub.New(reads, hub.Options{IdleTimeout: time.Hour, SweepEvery: -1, Bus: hb, NodeID: fmt.Sprintf("pg%d", i), PollEvery: poll, Lease: lease})
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			if err := h.Close(ctx); err != nil {
				tb.Errorf("hub Close: %v", err)
			}
			bus.Close()
			s.Close()
		})
		out = append(out, &pgNode{store: s, reads: reads, bus: bus, hub: h})
	}
	// Every listener LISTENs before a test publishes anything.
	for _, nd := range out {
		waitUntil(tb, "listener connected", func() bool { return nd.bus.Connects() > 0 })
	}
	return out
}

// countingStore counts the reads a hub makes of a board's version and
// changes: what a pull answered from memory does not make.
type countingStore struct {
	persist.SyncStore
	n atomic.Int64
}

func (s *countingStore) CurrentVersion(ctx context.Context, boardID string) (int64, error) {
	s.n.Add(1)
	return s.SyncStore.CurrentVersion(ctx, boardID)
}

func (s *countingStore) ChangesSince(ctx context.Context, boardID string, since int64) (*board.Changes, error) {
	s.n.Add(1)
	return s.SyncStore.ChangesSince(ctx, boardID, since)
}

func (s *countingStore) ScanChangesSince(ctx context.Context, boardID string, since int64, fn func(p *persist.ChangePart) error) error {
	s.n.Add(1)
	return s.SyncStore.ScanChangesSince(ctx, boardID, since, fn)
}

// waitUntil polls cond, failing after waitFor: for states only a query
// can see (a listener connected), never for a duration.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %s", what, waitFor)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPGNodesFanOut: two nodes on one PostgreSQL database; pushes on either
// reach a subscriber on the other through NOTIFY, in order and without a
// gap; presence and kicks cross too.
func TestPGNodesFanOut(t *testing.T) {
	nodes := newPGNodes(t, 2)
	ctx := context.Background()
	qb := roomstest.NewQueue(256)
	sb, _, err := nodes[1].hub.Subscribe(ctx, "b1", "cb", "guest@example.com", qb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Leave()
	qa := roomstest.NewQueue(256)
	sa, _, err := nodes[0].hub.Subscribe(ctx, "b1", "ca", "owner@example.com", qa)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Leave()
	waitPresence(t, qb, "joined", "ca")
	for i := range 5 {
		h := nodes[i%2].hub
		if _, _, err := h.Push(ctx, "b1", onePush(fmt.Sprintf("n%d", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []*roomstest.Queue{qa, qb} {
		var v int64
		for v < 5 {
			m := next(t, q, livewire.TypeChanges)
			if m.Since > v || m.ServerVersion <= v {
				t.Fatalf("changes since %d to %d after version %d", m.Since, m.ServerVersion, v)
			}
			v = m.ServerVersion
		}
	}
	nodes[0].hub.Kick("b1", "guest@example.com")
	select {
	case <-sb.Done():
		if code, _ := sb.CloseStatus(); code != livewire.CloseForbidden {
			t.Fatalf("closed with %d", code)
		}
	case <-time.After(waitFor):
		t.Fatal("kick on A did not reach B")
	}
}

// TestPGListenerReconnects: when PostgreSQL ends the listener's backend,
// the bus reconnects and the node rechecks its boards, so a push made
// while it was away reaches its subscriber, and later ones do too.
func TestPGListenerReconnects(t *testing.T) {
	nodes := newPGNodes(t, 2)
	ctx := context.Background()
	qb := roomstest.NewQueue(64)
	sb, _, err := nodes[1].hub.Subscribe(ctx, "b1", "cb", "guest@example.com", qb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Leave()
	pid := nodes[1].bus.ListenerPID()
	var ended bool
	if err := nodes[0].store.Pool().QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ended); err != nil || !ended {
		t.Fatalf("terminate listener %d: %v %v", pid, ended, err)
	}
	if _, _, err := nodes[0].hub.Push(ctx, "b1", onePush("n1"), ""); err != nil {
		t.Fatal(err)
	}
	// Whether its note came before the listener died, or the reconnect's
	// recheck found it, the change arrives.
	if m := next(t, qb, livewire.TypeChanges); m.ServerVersion != 1 {
		t.Fatalf("got %+v, want version 1", m)
	}
	waitUntil(t, "listener reconnected", func() bool { return nodes[1].bus.Connects() >= 2 })
	if _, _, err := nodes[0].hub.Push(ctx, "b1", onePush("n2"), ""); err != nil {
		t.Fatal(err)
	}
	if m := next(t, qb, livewire.TypeChanges); m.Since != 1 || m.ServerVersion != 2 {
		t.Fatalf("after the reconnect: %+v, want since 1 to version 2", m)
	}
}

// BenchmarkPGFanOut pushes on node A, one push at a time, and reports how
// long each took to reach a subscriber on A (same node) and one on B
// (through NOTIFY and B's read of the store): p50 and p99 of each.
//
//	go test -run '^$' -bench PGFanOut -benchtime 2000x ./hub/
func BenchmarkPGFanOut(b *testing.B) {
	nodes := newPGNodes(b, 2)
	ctx := context.Background()
	qs := []*roomstest.Queue{roomstest.NewQueue(1024), roomstest.NewQueue(1024)}
	for i, nd := range nodes {
		s, _, err := nd.hub.Subscribe(ctx, "b1", fmt.Sprintf("c%d", i), fmt.Sprintf("u%d@example.com", i), qs[i])
		if err != nil {
			b.Fatal(err)
		}
		defer s.Leave()
	}
	same := make([]time.Duration, 0, b.N)
	cross := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		v, _, err := nodes[0].hub.Push(ctx, "b1", onePush(fmt.Sprintf("n%d", i)), "")
		if err != nil {
			b.Fatal(err)
		}
		for j, q := range qs {
			for {
				m := next(b, q, livewire.TypeChanges)
				if m.ServerVersion >= v {
					break
				}
			}
			if j == 0 {
				same = append(same, time.Since(t0))
			} else {
				cross = append(cross, time.Since(t0))
			}
		}
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(same, 0.5), "same-p50-ms")
	b.ReportMetric(pct(same, 0.99), "same-p99-ms")
	b.ReportMetric(pct(cross, 0.5), "cross-p50-ms")
	b.ReportMetric(pct(cross, 0.99), "cross-p99-ms")
}

// heldBus is a node's bus whose incoming notes can be held back: while
// held, the listener waits before handing a note on, as if PostgreSQL's
// NOTIFY were late; its probes, read by the same listener after the note,
// are held with it. Publishing is untouched.
type heldBus struct {
	hub.Prober
	mu   sync.Mutex
	gate chan struct{} // open (closed channel) unless held
}

func newHeldBus(b hub.Bus) *heldBus {
	open := make(chan struct{})
	close(open)
	return &heldBus{Prober: b.(hub.Prober), gate: open}
}

func (b *heldBus) Listen(receive func([]byte), resync func()) {
	b.Prober.Listen(func(p []byte) {
		b.mu.Lock()
		gate := b.gate
		b.mu.Unlock()
		<-gate
		receive(p)
	}, resync)
}

// hold holds every note from now on; the returned release lets them
// through (safe to call twice).
func (b *heldBus) hold() (release func()) {
	gate := make(chan struct{})
	b.mu.Lock()
	b.gate = gate
	b.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

// TestPGPullAfterAckOnOtherNode: after node B acknowledged a push, a pull
// on node A sees it, even though B's NOTIFY has not reached A (held back
// here, not raced): A's room must not answer "nothing new" from its
// memory. A long poll on A from the version A's room holds is answered at
// once with the store's version, not held.
func TestPGPullAfterAckOnOtherNode(t *testing.T) {
	var a *heldBus
	nodes := startPGNodes(t, 2, func(i int, b hub.Bus) hub.Bus {
		if i == 0 {
			a = newHeldBus(b)
			return a
		}
		return b
	})
	ctx := context.Background()
	if _, _, err := nodes[1].hub.Push(ctx, "b1", onePush("n1"), ""); err != nil {
		t.Fatal(err)
	}
	// A's room starts at 1 and has confirmed it with the store.
	if res, err := nodes[0].hub.Pull(ctx, "b1", 0); err != nil || res.ServerVersion != 1 {
		t.Fatalf("first pull on A: %+v %v, want version 1", res, err)
	}
	release := a.hold()
	t.Cleanup(release) // before the nodes close: the listener waits on it
	pushOnB(t, nodes[1].hub, "n2", 2)
	res, err := nodes[0].hub.Pull(ctx, "b1", 1)
	if err != nil || res.ServerVersion != 2 || res.Changes == nil || len(res.Changes.Notes) != 1 || res.Changes.Notes[0].ID != "n2" {
		t.Fatalf("pull since 1 on A after B acknowledged version 2: %+v %v, want version 2 with n2", res, err)
	}
	pushOnB(t, nodes[1].hub, "n3", 3)
	// The streamed pull (what GET /sync uses) from 2 sees 3, with n3.
	v, changed, streamed, err := streamedPull(ctx, nodes[0].hub, 2)
	if err != nil || v != 3 || !changed || len(streamed) != 1 || streamed[0] != "n3" {
		t.Fatalf("streamed pull since 2 on A after B acknowledged version 3: version %d changed %v notes %v (%v), want 3 with n3", v, changed, streamed, err)
	}
	pushOnB(t, nodes[1].hub, "n3b", 4)
	// A plain pull from 3 sees 4 too; and a long poll from 4 is not held.
	if res, err := nodes[0].hub.Pull(ctx, "b1", 3); err != nil || res.ServerVersion != 4 || res.Changes == nil {
		t.Fatalf("pull since 3 on A after B acknowledged version 4: %+v %v, want version 4 with changes", res, err)
	}
	pushOnB(t, nodes[1].hub, "n4", 5)
	checkWaitNotHeld(t, nodes[0].hub, 4, 5)
	release()
}

// checkWaitNotHeld fails unless a long poll on b1 from version from
// through node A's hub h ends at once, at version want.
func checkWaitNotHeld(t *testing.T, h *hub.Hub, from, want int64) {
	t.Helper()
	wt, err := h.Wait(context.Background(), "b1", "x@example.com", from)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Stop()
	select {
	case e := <-wt.Ended():
		if e.Version != want || e.Reason != rooms.WaitPassed {
			t.Fatalf("long poll from %d on A: %+v, want version %d", from, e, want)
		}
	default:
		t.Fatalf("long poll from %d on A is held while the store is at %d", from, want)
	}
}

// pushOnB pushes note id to b1 through node B's hub h, and fails unless
// the push makes version want.
func pushOnB(t *testing.T, h *hub.Hub, id string, want int64) {
	t.Helper()
	if v, _, err := h.Push(context.Background(), "b1", onePush(id), ""); err != nil || v != want {
		t.Fatalf("push on B: %d %v, want version %d", v, err, want)
	}
}

// streamedPull pulls b1 since since through h as GET /sync does, and
// returns the IDs of the notes streamed.
func streamedPull(ctx context.Context, h *hub.Hub, since int64) (version int64, changed bool, notes []string, err error) {
	version, changed, err = h.PullTo(ctx, "b1", since, func(p *persist.ChangePart) error {
		if err := p.Decode(); err != nil {
			return err
		}
		if p.Kind == persist.PartNote {
			notes = append(notes, p.Note.ID)
		}
		return nil
	})
	return version, changed, notes, err
}

// BenchmarkPGPullNoChange is a pull that finds nothing new, on PostgreSQL,
// side by side in one loop: each round makes one pull through a hub
// without a bus ("memory": one node, where the room's version is the
// truth) and one through a hub with one ("nodes": several nodes, answered
// from memory while the bus's probes are fresh, with one indexed read of
// the board's version otherwise; before issue 26's lease, always the
// read), on one database, and times each. It reports the mean, p50 and
// p99 of each, the ratio of the means, and the share of the "nodes" pulls
// that read the store.
//
//	go test -run '^$' -bench PGPullNoChange -benchtime 20000x -count 3 ./hub/
func BenchmarkPGPullNoChange(b *testing.B) {
	nodes := newPGNodes(b, 1)
	ctx := context.Background()
	if _, _, err := nodes[0].hub.Push(ctx, "b1", onePush("n1"), ""); err != nil {
		b.Fatal(err)
	}
	alone := hub.New(nodes[0].store, hub.Options{IdleTimeout: time.Hour, SweepEvery: -1})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = alone.Close(ctx)
	})
	hubs := []*hub.Hub{alone, nodes[0].hub}
	for _, h := range hubs {
		if res, err := h.Pull(ctx, "b1", 1); err != nil || res.Changes != nil {
			b.Fatalf("pull since 1: %+v %v, want nothing new", res, err)
		}
	}
	took := [2][]time.Duration{}
	reads := nodes[0].reads.n.Load()
	for b.Loop() {
		for i, h := range hubs {
			t0 := time.Now()
			if _, err := h.Pull(ctx, "b1", 1); err != nil {
				b.Fatal(err)
			}
			took[i] = append(took[i], time.Since(t0))
		}
	}
	reads = nodes[0].reads.n.Load() - reads
	mean := func(d []time.Duration) float64 {
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		return float64(sum.Nanoseconds()) / float64(len(d))
	}
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, int(float64(len(d))*p))].Nanoseconds())
	}
	for i, name := range []string{"memory", "nodes"} {
		b.ReportMetric(mean(took[i]), name+"-ns")
		b.ReportMetric(pct(took[i], 0.5), name+"-p50-ns")
		b.ReportMetric(pct(took[i], 0.99), name+"-p99-ns")
	}
	b.ReportMetric(mean(took[1])/mean(took[0]), "nodes/memory")
	b.ReportMetric(float64(reads)/float64(len(took[1])), "store-reads/pull")
}

// BenchmarkPGPullNoChangeParallel is BenchmarkPGPullNoChange with many
// clients pulling one board at once (a busy board's polling clients): the
// time per pull, one node ("memory") against several ("nodes": from
// memory while the probes are fresh; otherwise the pulls share version
// reads, rooms/confirm.go). It also reports the share of "nodes" pulls
// that read the store and the probes the bus sent a second (what a busy
// node's pulls cost PostgreSQL). Run the two alternately:
//
//	go test -run '^$' -bench PGPullNoChangeParallel -benchtime 200000x -count 5 ./hub/
func BenchmarkPGPullNoChangeParallel(b *testing.B) {
	nodes := newPGNodes(b, 1)
	ctx := context.Background()
	if _, _, err := nodes[0].hub.Push(ctx, "b1", onePush("n1"), ""); err != nil {
		b.Fatal(err)
	}
	alone := hub.New(nodes[0].store, hub.Options{IdleTimeout: time.Hour, SweepEvery: -1})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = alone.Close(ctx)
	})
	for _, c := range []struct {
		name string
		h    *hub.Hub
	}{{"memory", alone}, {"nodes", nodes[0].hub}} {
		b.Run(c.name, func(b *testing.B) {
			reads := nodes[0].reads.n.Load()
			probes, _ := nodes[0].bus.Probes()
			start := time.Now()
			b.SetParallelism(32) // 64 clients on 2 CPUs, as the load tool's pull mode
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if res, err := c.h.Pull(ctx, "b1", 1); err != nil || res.Changes != nil {
						b.Errorf("pull since 1: %+v %v, want nothing new", res, err)
						return
					}
				}
			})
			if c.h == alone {
				return
			}
			sent, _ := nodes[0].bus.Probes()
			b.ReportMetric(float64(nodes[0].reads.n.Load()-reads)/float64(b.N), "store-reads/pull")
			b.ReportMetric(float64(sent-probes)/time.Since(start).Seconds(), "probes/s")
		})
	}
}
