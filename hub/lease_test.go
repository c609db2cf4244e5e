package hub_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/rooms"
)

// Pulls from memory on several nodes (docs/scale-out.md, "Pulls from
// memory"): a node acknowledges a push once its note is out and the lease
// has passed; another answers a no-change pull from memory only while a
// probe it sent itself less than the lease ago has come back.

// longLease keeps a returned probe trusted for seconds, so that a test can
// make a node current (WaitProbe) and then pull without racing the clock.
const longLease = 10 * time.Second

// TestPGAckedPushSeenByEveryPull: a push acknowledged on one node is seen
// by a pull, a streamed pull and a long poll on the other that start after
// the ack, every time, with the lease's real timing (no note is held). The
// pulls ask from the version before the push: when the other node's room
// is still there, the answer comes from memory only if the probes say
// every acknowledged note is in.
func TestPGAckedPushSeenByEveryPull(t *testing.T) {
	nodes := newPGNodes(t, 2)
	ctx := context.Background()
	for _, nd := range nodes {
		if _, err := nd.hub.Pull(ctx, "b1", 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		from, to := nodes[i%2], nodes[(i+1)%2]
		v, _, err := from.hub.Push(ctx, "b1", onePush(fmt.Sprintf("n%d", i)), "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := to.hub.Pull(ctx, "b1", v-1)
		if err != nil || res.ServerVersion < v || res.Changes == nil {
			t.Fatalf("round %d: pull since %d after version %d was acknowledged: %+v %v", i, v-1, v, res, err)
		}
		sv, changed, _, err := streamedPull(ctx, to.hub, v-1)
		if err != nil || sv < v || !changed {
			t.Fatalf("round %d: streamed pull since %d after version %d was acknowledged: %d %v %v", i, v-1, v, sv, changed, err)
		}
		w, err := to.hub.Wait(ctx, "b1", "x@example.com", v-1)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-w.Ended():
			if e.Version < v || e.Reason != rooms.WaitPassed {
				t.Fatalf("round %d: long poll from %d: %+v, want version %d", i, v-1, e, v)
			}
		default:
			t.Fatalf("round %d: long poll from %d held after version %d was acknowledged", i, v-1, v)
		}
		w.Stop()
	}
}

// TestPGNoChangePullFromMemory: with a fresh probe, a no-change pull, a
// streamed one and a long poll on a node of several read nothing from the
// store; and a node nobody pulls from sends no probe.
func TestPGNoChangePullFromMemory(t *testing.T) {
	nodes := startPGNodesWith(t, pgNodesOptions{n: 1, lease: func(int) time.Duration { return longLease }, setup: pushN1})
	nd := nodes[0]
	ctx := context.Background()
	if sent, _ := nd.bus.Probes(); sent != 0 {
		t.Fatalf("an idle node sent %d probes, want none", sent)
	}
	if res, err := nd.hub.Pull(ctx, "b1", 0); err != nil || res.ServerVersion != 1 {
		t.Fatalf("full pull: %+v %v, want version 1", res, err)
	}
	waitProbe(t, nd.bus)
	before := nd.reads.n.Load()
	if res, err := nd.hub.Pull(ctx, "b1", 1); err != nil || res.ServerVersion != 1 || res.Changes != nil {
		t.Fatalf("pull since 1: %+v %v, want version 1 and nothing new", res, err)
	}
	if v, changed, _, err := streamedPull(ctx, nd.hub, 1); err != nil || v != 1 || changed {
		t.Fatalf("streamed pull since 1: %d %v %v, want version 1 and nothing new", v, changed, err)
	}
	w, err := nd.hub.Wait(ctx, "b1", "x@example.com", 1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.Ended():
		t.Fatalf("long poll from 1 answered %+v, want it held", e)
	default:
	}
	w.Stop()
	if got := nd.reads.n.Load() - before; got != 0 {
		t.Fatalf("%d store reads for no-change pulls with a fresh probe, want 0", got)
	}
}

// pushN1 makes b1 version 1 (note n1) through the store, before any node
// starts.
func pushN1(s *postgres.Store) {
	if _, err := s.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: onePush("n1")}}); err != nil {
		panic(err)
	}
}

// waitProbe waits until a probe sent after the call came back to bus.
func waitProbe(t *testing.T, bus *postgres.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := bus.WaitProbe(ctx); err != nil {
		t.Fatalf("no probe came back: %v", err)
	}
}

// gatedResync is a bus whose resync can be held at its start: the
// listener has reconnected, and no probe of the new connection can come
// back until it is let go.
type gatedResync struct {
	hub.Prober
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *gatedResync) Listen(receive func([]byte), resync func()) {
	b.Prober.Listen(receive, func() {
		if b.armed.Load() {
			b.entered <- struct{}{}
			<-b.release
		}
		resync()
	})
}

func (b *gatedResync) open() { b.once.Do(func() { close(b.release) }) }

// TestPGPullAfterReconnectAsksStore: once the listener's connection is
// lost, and until a probe of the new connection comes back (after the
// resync), no-change pulls read the store: notes published meanwhile are
// lost. Then they are answered from memory again.
func TestPGPullAfterReconnectAsksStore(t *testing.T) {
	gate := &gatedResync{entered: make(chan struct{}, 1), release: make(chan struct{})}
	nodes := startPGNodesWith(t, pgNodesOptions{n: 1, setup: pushN1,
		lease: func(int) time.Duration { return longLease },
		wrap: func(_ int, b hub.Bus) hub.Bus {
			gate.Prober = b.(hub.Prober)
			return gate
		}})
	t.Cleanup(gate.open) // before the nodes close: the listener may wait on it
	nd := nodes[0]
	ctx := context.Background()
	if _, err := nd.hub.Pull(ctx, "b1", 0); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, nd.bus)
	pullCountingReads(t, nd, 0)

	gate.armed.Store(true)
	pid := nd.bus.ListenerPID()
	var ended bool
	if err := nd.store.Pool().QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ended); err != nil || !ended {
		t.Fatalf("terminate listener %d: %v %v", pid, ended, err)
	}
	select {
	case <-gate.entered:
	case <-time.After(waitFor):
		t.Fatal("the listener did not reconnect")
	}
	pullCountingReads(t, nd, 1)
	gate.open()
	waitProbe(t, nd.bus)
	pullCountingReads(t, nd, 0)
}

// pullCountingReads makes a no-change pull of b1 (at version 1) on nd and
// fails unless it read the store want times.
func pullCountingReads(t *testing.T, nd *pgNode, want int64) {
	t.Helper()
	before := nd.reads.n.Load()
	if res, err := nd.hub.Pull(context.Background(), "b1", 1); err != nil || res.ServerVersion != 1 || res.Changes != nil {
		t.Fatalf("pull since 1: %+v %v, want version 1 and nothing new", res, err)
	}
	if got := nd.reads.n.Load() - before; got != want {
		t.Fatalf("a no-change pull read the store %d times, want %d", got, want)
	}
}

// failingPublish is a bus whose NOTIFYs fail while armed, telling failed
// of each.
type failingPublish struct {
	hub.Prober
	armed  atomic.Bool
	failed chan struct{}
}

func (b *failingPublish) Publish(ctx context.Context, payload []byte) error {
	if b.armed.Load() {
		select {
		case b.failed <- struct{}{}:
		default:
		}
		return errors.New("notify refused (test)")
	}
	return b.Prober.Publish(ctx, payload)
}

// TestPGAckWaitsForTheNote: a push is not acknowledged while its note
// cannot be published (another node could answer a pull without it); the
// publisher tries again, and once the note is out the push is
// acknowledged.
func TestPGAckWaitsForTheNote(t *testing.T) {
	fail := &failingPublish{failed: make(chan struct{}, 1)}
	fail.armed.Store(true)
	nodes := startPGNodesWith(t, pgNodesOptions{n: 1, wrap: func(_ int, b hub.Bus) hub.Bus {
		fail.Prober = b.(hub.Prober)
		return fail
	}})
	type answer struct {
		v   int64
		err error
	}
	acked := make(chan answer, 1)
	go func() {
		v, _, err := nodes[0].hub.Push(context.Background(), "b1", onePush("n1"), "")
		acked <- answer{v, err}
	}()
	for range 2 { // the first try and a retry
		select {
		case <-fail.failed:
		case <-time.After(waitFor):
			t.Fatal("the note was not published")
		}
	}
	select {
	case a := <-acked:
		t.Fatalf("push answered %+v while its note could not be published", a)
	default:
	}
	fail.armed.Store(false)
	select {
	case a := <-acked:
		if a.err != nil || a.v != 1 {
			t.Fatalf("push: %+v, want version 1", a)
		}
	case <-time.After(waitFor):
		t.Fatal("push not acknowledged once its note could be published")
	}
}

// TestPGLostNoteRepairedForPulls: a commit whose note never went out (its
// node died between the commit and the NOTIFY, so it was never
// acknowledged) reaches the pulls of a room nobody watches at the next
// recheck, as it reaches live subscribers: the rooms pulled since the
// last round are rechecked too.
func TestPGLostNoteRepairedForPulls(t *testing.T) {
	nodes := startPGNodesWith(t, pgNodesOptions{n: 1, setup: pushN1, pollEvery: time.Hour,
		lease: func(int) time.Duration { return longLease }})
	nd := nodes[0]
	ctx := context.Background()
	if _, err := nd.hub.Pull(ctx, "b1", 0); err != nil {
		t.Fatal(err)
	}
	// Another node's commit, with no note.
	if _, err := nd.store.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: onePush("n2")}}); err != nil {
		t.Fatal(err)
	}
	nd.hub.Tick(ctx)
	waitProbe(t, nd.bus)
	res, err := nd.hub.Pull(ctx, "b1", 1)
	if err != nil || res.ServerVersion != 2 || res.Changes == nil {
		t.Fatalf("pull since 1 after the recheck: %+v %v, want version 2 with n2", res, err)
	}
}

// TestPGShorterLeaseHeardTurnsMemoryPullsOff: once a node hears another
// whose lease is shorter than its own (a -node-lease set apart, or a build
// from before leases during a rolling upgrade), that other node may
// acknowledge a push before this one's probes cover it: every no-change
// pull here then asks the store, however fresh the probe.
func TestPGShorterLeaseHeardTurnsMemoryPullsOff(t *testing.T) {
	nodes := startPGNodesWith(t, pgNodesOptions{n: 2, setup: pushN1, lease: func(i int) time.Duration {
		if i == 0 {
			return longLease
		}
		return -1 // off: acknowledges at once
	}})
	nd := nodes[0]
	ctx := context.Background()
	if _, err := nd.hub.Pull(ctx, "b1", 0); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, nd.bus)
	pullCountingReads(t, nd, 0) // nobody heard yet: from memory
	nodes[1].hub.Tick(ctx)      // node 1 says it is alive, announcing no lease
	waitUntil(t, "a no-change pull asking the store", func() bool {
		waitProbe(t, nd.bus)
		before := nd.reads.n.Load()
		if _, err := nd.hub.Pull(ctx, "b1", 1); err != nil {
			t.Fatal(err)
		}
		return nd.reads.n.Load() > before
	})
	waitProbe(t, nd.bus)
	pullCountingReads(t, nd, 1)
}

// TestPGAckGivesUpOnANoteThatCannotGoOut: while NOTIFY keeps failing, a
// push is not held for the whole outage: past the bound it is answered
// "saved but could not be confirmed", and its retry with the same
// idempotency key, once notes go out again, is acknowledged as a replay.
func TestPGAckGivesUpOnANoteThatCannotGoOut(t *testing.T) {
	fail := &failingPublish{failed: make(chan struct{}, 1)}
	fail.armed.Store(true)
	nodes := startPGNodesWith(t, pgNodesOptions{n: 1, wrap: func(_ int, b hub.Bus) hub.Bus {
		fail.Prober = b.(hub.Prober)
		return fail
	}})
	ctx := context.Background()
	_, _, err := nodes[0].hub.Push(ctx, "b1", onePush("n1"), "key-1")
	if board.ErrorCode(err) != board.EUNAVAILABLE {
		t.Fatalf("push while notes cannot go out: %v, want the push saved but not confirmed", err)
	}
	fail.armed.Store(false)
	v, replayed, err := nodes[0].hub.Push(ctx, "b1", onePush("n1"), "key-1")
	if err != nil || v != 1 || !replayed {
		t.Fatalf("retry: version %d replayed %v err %v, want version 1 replayed", v, replayed, err)
	}
}
