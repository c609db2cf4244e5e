package hub_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

const waitFor = 10 * time.Second

// newHub opens a store with the boards claimed and a hub on it whose
// janitor never fires on its own during a test; both close at the end.
func newHub(tb testing.TB, boards ...string) (*hub.Hub, *bolt.DB, *persisttest.Clock) {
	tb.Helper()
	db, c, _ := persisttest.Open(tb, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), boards...)
	h := hub.New(db, hub.Options{Now: c.Now, IdleTimeout: time.Hour, SweepEvery: -1})
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			tb.Errorf("hub Close: %v", err)
		}
	})
	return h, db, c
}

func onePush(id string) *board.Push {
	return &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: id, Content: "x"}}}}
}

func TestRoomLifecycle(t *testing.T) {
	h, _, c := newHub(t, "b1")
	ctx := context.Background()
	r1, err := h.Room(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if r2, _ := h.Room(ctx, "b1"); r2 != r1 {
		t.Fatal("second Room call started a second room")
	}
	if v, _, err := h.Push(ctx, "b1", onePush("a"), ""); err != nil || v != 1 {
		t.Fatalf("push: v=%d err=%v", v, err)
	}
	if n := h.StopIdle(c.Now()); n != 0 {
		t.Fatalf("StopIdle right after use stopped %d rooms", n)
	}
	c.Advance(2 * time.Hour)
	if n := h.StopIdle(c.Now()); n != 1 || h.Rooms() != 0 {
		t.Fatalf("StopIdle after 2h stopped %d, %d left; want 1 and 0", n, h.Rooms())
	}
	select {
	case <-r1.Done():
	default:
		t.Fatal("stopped room's goroutine still runs")
	}
	// On demand again, from the stored version.
	if v, _, err := h.Push(ctx, "b1", onePush("b"), ""); err != nil || v != 2 {
		t.Fatalf("push after restart: v=%d err=%v, want 2", v, err)
	}
	res, err := h.Pull(ctx, "b1", 0)
	if err != nil || res.ServerVersion != 2 || len(res.Changes.Notes) != 2 {
		t.Fatalf("pull after restart: %+v err=%v", res, err)
	}
}

func TestSubscribedRoomStays(t *testing.T) {
	h, _, c := newHub(t, "b1")
	s, _, err := h.Subscribe(context.Background(), "b1", "A", "a@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(24 * time.Hour)
	if n := h.StopIdle(c.Now()); n != 0 {
		t.Fatal("a room with a live connection was stopped")
	}
	s.Leave()
	c.Advance(2 * time.Hour)
	if n := h.StopIdle(c.Now()); n != 1 {
		t.Fatalf("after the last connection left and 2h: stopped %d, want 1", n)
	}
}

func TestUnclaimedBoard(t *testing.T) {
	h, _, _ := newHub(t)
	if _, err := h.Room(context.Background(), "ghost"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("err=%v, want ENOTFOUND", err)
	}
	if h.Rooms() != 0 {
		t.Fatal("a room was kept for an unclaimed board")
	}
}

func TestKick(t *testing.T) {
	h, _, _ := newHub(t, "b1")
	ctx := context.Background()
	gone, _, _ := h.Subscribe(ctx, "b1", "G", "gone@example.com", roomstest.NewQueue(256))
	stay, _, _ := h.Subscribe(ctx, "b1", "S", "stay@example.com", roomstest.NewQueue(256))
	h.Kick("b1", "gone@example.com")
	h.Kick("nope", "gone@example.com") // no room: nothing happens
	if code, _ := gone.CloseStatus(); code != livewire.CloseForbidden {
		t.Fatalf("kicked with %d, want %d", code, livewire.CloseForbidden)
	}
	select {
	case <-stay.Done():
		t.Fatal("another user was kicked too")
	default:
	}
	gone.Leave()
	stay.Leave()
}

func TestCloseSaysGoingAwayAndWaitsForConnections(t *testing.T) {
	h, _, _ := newHub(t, "b1")
	ctx := context.Background()
	s, _, err := h.Subscribe(ctx, "b1", "A", "a@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, waitFor)
		defer cancel()
		closed <- h.Close(cctx)
	}()
	if code, _ := s.CloseStatus(); code != livewire.CloseGoingAway {
		t.Fatalf("closed with %d, want %d", code, livewire.CloseGoingAway)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) before the connection left", err)
	default:
	}
	s.Leave() // the connection's handler ends
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, _, err := h.Push(ctx, "b1", onePush("a"), ""); board.ErrorCode(err) != board.EUNAVAILABLE {
		t.Fatalf("push after Close: err=%v, want EUNAVAILABLE", err)
	}
	if _, _, err := h.Subscribe(ctx, "b1", "B", "b@example.com", roomstest.NewQueue(256)); board.ErrorCode(err) != board.EUNAVAILABLE {
		t.Fatalf("subscribe after Close: err=%v, want EUNAVAILABLE", err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseHonoursDeadline(t *testing.T) {
	h, _, _ := newHub(t, "b1")
	s, _, err := h.Subscribe(context.Background(), "b1", "A", "a@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// The connection never leaves: Close gives up at the deadline.
	if err := h.Close(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Close err=%v, want the deadline", err)
	}
	s.Leave()
}

func TestSweepPrunesTombstones(t *testing.T) {
	h, _, c := newHub(t, "b1")
	ctx := context.Background()
	h.Push(ctx, "b1", onePush("a"), "key")                                               // v1
	h.Push(ctx, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}, "") // v2
	h.Push(ctx, "b1", onePush("b"), "")                                                  // v3
	c.Advance(31 * 24 * time.Hour)
	if err := h.Sweep(ctx, c.Now()); err != nil {
		t.Fatal(err)
	}
	res, err := h.Pull(ctx, "b1", 1)
	if err != nil || res.Changes == nil || !res.Changes.Reset || len(res.Changes.DeletedNoteIDs) != 0 {
		t.Fatalf("pull since 1 after the sweep: %+v err=%v, want a reset", res.Changes, err)
	}
	// The key was swept too: the same key applies again.
	if v, replayed, _ := h.Push(ctx, "b1", onePush("a"), "key"); v != 4 || replayed {
		t.Fatalf("key after sweep: v=%d replayed=%v, want 4 applied", v, replayed)
	}
}

// TestSweepPrunesRevisions: the sweep forgets revisions older than the
// tombstone retention past a row's newest persist.KeepRevisions, so a push
// whose base is that old falls back to replacing the row; with a negative
// retention it keeps them all, as it keeps the tombstones.
func TestSweepPrunesRevisions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retention time.Duration
		fallbacks int
	}{{"Default", 0, 1}, {"KeepForever", -1, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			db, c, _ := persisttest.Open(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), "b1")
			h := hub.New(db, hub.Options{Now: c.Now, SweepEvery: -1, TombstoneRetention: tc.retention})
			t.Cleanup(func() { h.Close(context.Background()) })
			ctx := context.Background()
			// Versions 1..KeepRevisions+2 of note a: one revision more than
			// the sweep keeps.
			for i := range persist.KeepRevisions + 2 {
				p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", Content: fmt.Sprint(i)}}}}
				if _, _, err := h.Push(ctx, "b1", p, ""); err != nil {
					t.Fatal(err)
				}
			}
			c.Advance(31 * 24 * time.Hour)
			if err := h.Sweep(ctx, c.Now()); err != nil {
				t.Fatal(err)
			}
			res, err := db.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", Content: "mine", BaseVersion: 1}}}}}})
			if err != nil || res[0].Err != nil || res[0].Fallbacks != tc.fallbacks || res[0].Merged != 1-tc.fallbacks {
				t.Fatalf("push on base 1 after the sweep: %+v, %v; want %d fallbacks", res, err, tc.fallbacks)
			}
		})
	}
}

// TestSweepKeepsTombstonesWithinRetention: one sweep prunes a tombstone
// older than the retention (30 days) and keeps a younger one, so a pull
// from after the pruned one still learns of the kept deletion.
func TestSweepKeepsTombstonesWithinRetention(t *testing.T) {
	h, _, c := newHub(t, "b1")
	ctx := context.Background()
	del := func(id string) *board.Push { return &board.Push{Notes: board.NoteChanges{Deleted: []string{id}}} }
	for _, p := range []*board.Push{onePush("old"), del("old")} { // v1, v2
		if _, _, err := h.Push(ctx, "b1", p, ""); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(20 * 24 * time.Hour)
	for _, p := range []*board.Push{onePush("young"), del("young")} { // v3, v4
		if _, _, err := h.Push(ctx, "b1", p, ""); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(11 * 24 * time.Hour) // "old" was deleted 31 days ago, "young" 11
	if err := h.Sweep(ctx, c.Now()); err != nil {
		t.Fatal(err)
	}
	res, err := h.Pull(ctx, "b1", 3)
	if err != nil || res.Changes == nil || res.Changes.Reset || len(res.Changes.DeletedNoteIDs) != 1 || res.Changes.DeletedNoteIDs[0] != "young" {
		t.Fatalf("pull since 3: %+v err=%v, want the deletion of young, no reset", res.Changes, err)
	}
	res, err = h.Pull(ctx, "b1", 1)
	if err != nil || res.Changes == nil || !res.Changes.Reset {
		t.Fatalf("pull since 1: %+v err=%v, want a reset (old's tombstone is pruned)", res.Changes, err)
	}
}

// TestRequestsRaceWithIdleStops pushes to and pulls from many boards while
// a janitor stops their rooms as often as it may: no push is lost or
// doubled. The janitor says every room is idle, but a request retries on a
// fresh room only three times, so it may stop each board's room at most
// twice per request: a budget that the board's requester refills after
// each request. Every request then succeeds whatever the scheduling, and
// the stops still fall wherever they fall.
func TestRequestsRaceWithIdleStops(t *testing.T) {
	const boards, each, stopsPerRequest = 10, 5, 2
	ids := make([]string, boards)
	budget := make(map[string]*atomic.Int32, boards)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
		budget[ids[i]] = new(atomic.Int32)
		budget[ids[i]].Store(stopsPerRequest)
	}
	h, db, c := newHub(t, ids...)
	pick := func(id string) bool { // takes one stop from id's budget
		b := budget[id]
		for {
			n := b.Load()
			if n == 0 {
				return false
			}
			if b.CompareAndSwap(n, n-1) {
				return true
			}
		}
	}
	refilled := make(chan struct{}, 1)
	refill := func(id string) {
		budget[id].Store(stopsPerRequest)
		select {
		case refilled <- struct{}{}:
		default:
		}
	}
	stop := make(chan struct{})
	var janitor sync.WaitGroup
	stops := 0
	janitor.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := h.StopIdleOfForTest(c.Now().Add(48*time.Hour), pick) // everything looks idle
			stops += n
			if n == 0 { // nothing to stop until a request ends
				select {
				case <-refilled:
				case <-stop:
					return
				}
			}
		}
	})
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for i := range each {
				if _, _, err := h.Push(context.Background(), id, onePush(fmt.Sprintf("n%d", i)), ""); err != nil {
					t.Errorf("%s push %d: %v", id, i, err)
				}
				refill(id)
				if _, err := h.Pull(context.Background(), id, 0); err != nil {
					t.Errorf("%s pull: %v", id, err)
				}
				refill(id)
			}
		})
	}
	wg.Wait()
	close(stop)
	janitor.Wait()
	t.Logf("the janitor stopped %d rooms", stops)
	for _, id := range ids {
		if v, err := db.CurrentVersion(context.Background(), id); err != nil || v != each {
			t.Fatalf("%s: version=%d err=%v, want %d", id, v, err, each)
		}
	}
}

// TestTinyIdleTimeout: an idle timeout too small to halve (-room-idle 1ns)
// still gives a working hub instead of a panicking janitor.
func TestTinyIdleTimeout(t *testing.T) {
	db, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := hub.New(db, hub.Options{IdleTimeout: time.Nanosecond, SweepEvery: -1})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
