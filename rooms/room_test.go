package rooms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
	"corkboard/rooms"
	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

// waitFor bounds every wait on a message; tests wait on channels, never sleep.
const waitFor = 10 * time.Second

func newClock() *persisttest.Clock {
	return persisttest.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
}

// openStore opens a real bbolt store in a temp folder with board b1 claimed.
func openStore(tb testing.TB) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := db.ClaimBoard(context.Background(), "b1", "owner@example.com"); err != nil {
		tb.Fatal(err)
	}
	return db
}

// startRoom starts b1's room on store; it is closed when the test ends.
// Without opts.AfterFunc its timers never fire (presence batches and idle
// sweeps are sent only by tests that fire them, see startTimedRoom).
func startRoom(tb testing.TB, store persist.SyncStore, opts rooms.Options) *rooms.Room {
	tb.Helper()
	if opts.AfterFunc == nil {
		opts.AfterFunc = roomstest.NewTimers().AfterFunc
	}
	r, err := rooms.Start(context.Background(), store, "b1", opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return r
}

// queues maps each test subscriber to its sink.
var queues sync.Map // *rooms.Subscriber → *roomstest.Queue

// subscribe joins r with a queue of the live transport's default size.
func subscribe(tb testing.TB, r *rooms.Room, connID, email string) (*rooms.Subscriber, rooms.Welcome) {
	tb.Helper()
	return subscribeQueue(tb, r, connID, email, 256)
}

// subscribeQueue joins r with a queue holding at most capacity messages.
func subscribeQueue(tb testing.TB, r *rooms.Room, connID, email string, capacity int) (*rooms.Subscriber, rooms.Welcome) {
	tb.Helper()
	q := roomstest.NewQueue(capacity)
	s, w, err := r.Subscribe(context.Background(), rooms.Member{ConnID: connID, Email: email, Sink: q})
	if err != nil {
		tb.Fatalf("Subscribe: %v", err)
	}
	queues.Store(s, q)
	return s, w
}

// messages is what reached s's sink.
func messages(s *rooms.Subscriber) <-chan []byte {
	q, _ := queues.Load(s)
	return q.(*roomstest.Queue).Messages()
}

// msg is any live message, decoded.
type msg struct {
	Type          string       `json:"type"`
	ID            string       `json:"id"`
	From          string       `json:"from"`
	Since         int64        `json:"since"`
	ServerVersion int64        `json:"serverVersion"`
	Replayed      bool         `json:"replayed"`
	Notes         []board.Note `json:"notes"`
	DeletedNotes  []string     `json:"deletedNoteIds"`
	Board         board.Header `json:"board"`
	Email         string       `json:"email"`
	Color         string       `json:"color"`
	X             float64      `json:"x"`
	Y             float64      `json:"y"`
	NoteID        string       `json:"noteId"`
	// Presence and following.
	Joined  []livewire.Presence `json:"joined"`
	Left    []string            `json:"left"`
	Idle    []string            `json:"idle"`
	Active  []string            `json:"active"`
	More    bool                `json:"more"`
	Count   int                 `json:"count"`
	Present []livewire.Presence `json:"present"`
	Next    string              `json:"next"`
	Zoom    float64             `json:"zoom"`
	Ended   string              `json:"ended"`
}

// next returns the subscriber's next message, failing after waitFor.
func next(tb testing.TB, s *rooms.Subscriber) msg {
	tb.Helper()
	select {
	case b := <-messages(s):
		var m msg
		if err := json.Unmarshal(b, &m); err != nil {
			tb.Fatalf("decode %s: %v", b, err)
		}
		return m
	case <-time.After(waitFor):
		tb.Fatalf("no message for %s within %v", s.ID(), waitFor)
	}
	return msg{}
}

// nextOf skips messages of other types.
func nextOf(tb testing.TB, s *rooms.Subscriber, typ string) msg {
	tb.Helper()
	for {
		if m := next(tb, s); m.Type == typ {
			return m
		}
	}
}

// noMessage checks that nothing is queued for s right now.
func noMessage(tb testing.TB, s *rooms.Subscriber) {
	tb.Helper()
	select {
	case b := <-messages(s):
		tb.Fatalf("unexpected message for %s: %s", s.ID(), b)
	default:
	}
}

func onePush(id, content string) *board.Push {
	return &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: id, Content: content}}}}
}

func TestPushFansOutInOrder(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	a, wa := subscribe(t, r, "A", "a@example.com")
	b, _ := subscribe(t, r, "B", "b@example.com")
	if wa.ServerVersion != 0 {
		t.Fatalf("welcome version=%d, want 0", wa.ServerVersion)
	}
	for i := 1; i <= 20; i++ {
		v, replayed, err := r.Push(context.Background(), onePush(fmt.Sprintf("n%d", i), "x"), "")
		if err != nil || replayed || v != int64(i) {
			t.Fatalf("push %d: v=%d replayed=%v err=%v", i, v, replayed, err)
		}
	}
	for _, s := range []*rooms.Subscriber{a, b} {
		for i := 1; i <= 20; i++ {
			m := next(t, s)
			if m.Type != livewire.TypeChanges || m.ServerVersion != int64(i) || m.Since != int64(i-1) || m.From != "" {
				t.Fatalf("%s message %d = %+v, want changes %d since %d", s.ID(), i, m, i, i-1)
			}
			if len(m.Notes) != 1 || m.Notes[0].ID != fmt.Sprintf("n%d", i) || m.Notes[0].Version != int64(i) || m.Board.Version != int64(i) {
				t.Fatalf("%s change %d carries %+v, want note n%d at version %d", s.ID(), i, m.Notes, i, i)
			}
		}
		noMessage(t, s)
	}
	if r.Version() != 20 {
		t.Fatalf("room version=%d, want 20", r.Version())
	}
}

func TestConcurrentPushers(t *testing.T) {
	const pushers, each, subs = 8, 10, 3
	db := openStore(t)
	r := startRoom(t, db, rooms.Options{})
	var all []*rooms.Subscriber
	for i := range subs {
		s, _ := subscribeQueue(t, r, fmt.Sprintf("S%d", i), fmt.Sprintf("s%d@example.com", i), pushers*each+subs+8)
		all = append(all, s)
	}
	type ack struct {
		id string
		v  int64
	}
	acks := make(chan ack, pushers*each)
	var wg sync.WaitGroup
	for g := range pushers {
		wg.Go(func() {
			last := int64(0)
			for i := range each {
				id := fmt.Sprintf("g%d-%d", g, i)
				v, _, err := r.Push(context.Background(), onePush(id, "x"), "")
				if err != nil {
					t.Errorf("push %s: %v", id, err)
					return
				}
				if v <= last {
					t.Errorf("pusher %d: version %d after %d, want strictly increasing", g, v, last)
				}
				last = v
				acks <- ack{id, v}
			}
		})
	}
	wg.Wait()
	close(acks)
	versions := map[int64]string{}
	for a := range acks {
		if other, dup := versions[a.v]; dup {
			t.Fatalf("version %d acknowledged twice (%s and %s)", a.v, other, a.id)
		}
		versions[a.v] = a.id
	}
	if len(versions) != pushers*each {
		t.Fatalf("%d acknowledged pushes, want %d", len(versions), pushers*each)
	}
	// Every acknowledged push is in the final state, at its version.
	ch, err := db.ChangesSince(context.Background(), "b1", 0)
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]int64{}
	for _, n := range ch.Notes {
		final[n.ID] = n.Version
	}
	for v, id := range versions {
		if final[id] != v {
			t.Fatalf("note %s: stored at version %d, acknowledged %d", id, final[id], v)
		}
	}
	// Every subscriber saw every change once, in order, with the same rows.
	for _, s := range all {
		for v := int64(1); v <= pushers*each; v++ {
			m := nextOf(t, s, livewire.TypeChanges)
			if m.ServerVersion != v || m.Since != v-1 || len(m.Notes) != 1 || m.Notes[0].ID != versions[v] {
				t.Fatalf("%s: got change %d since %d with %v, want %d (%s)", s.ID(), m.ServerVersion, m.Since, m.Notes, v, versions[v])
			}
		}
		noMessage(t, s)
	}
}

func TestPushFromAcksThePusherAndTellsTheOthers(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	b, _ := subscribe(t, r, "B", "b@example.com")
	v, _, err := a.Push(context.Background(), "m1", onePush("n1", "hello"), "idem-1")
	if err != nil || v != 1 {
		t.Fatalf("push: v=%d err=%v", v, err)
	}
	if m := next(t, a); m.Type != livewire.TypeAck || m.ID != "m1" || m.ServerVersion != 1 {
		t.Fatalf("pusher got %+v, want ack m1 at 1", m)
	}
	if m := next(t, b); m.Type != livewire.TypeChanges || m.From != "A" || m.ServerVersion != 1 || m.Notes[0].Content != "hello" {
		t.Fatalf("other got %+v, want changes from A at 1", m)
	}
	// A retry with the same key is acked with the original version and
	// reaches nobody else.
	if v, replayed, err := a.Push(context.Background(), "m2", onePush("n1", "again"), "idem-1"); v != 1 || !replayed || err != nil {
		t.Fatalf("retry: v=%d replayed=%v err=%v", v, replayed, err)
	}
	if m := next(t, a); m.Type != livewire.TypeAck || m.ID != "m2" || m.ServerVersion != 1 || !m.Replayed {
		t.Fatalf("retry ack %+v, want m2 at 1 replayed", m)
	}
	noMessage(t, b)
}

func TestInvalidPushChangesNothing(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	s, _ := subscribe(t, r, "A", "a@example.com")
	_, _, err := r.Push(context.Background(), onePush("", "no id"), "")
	if board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("err=%v, want EINVALID", err)
	}
	if r.Version() != 0 {
		t.Fatalf("version=%d, want 0", r.Version())
	}
	noMessage(t, s)
}

// TestSlowSubscriberIsDroppedWithoutDelayingOthers: slow never reads and
// its queue holds 4 messages; fast's queue holds every message it will be
// sent and is read only after the pushes, so neither outcome depends on
// when a reader gets to run.
func TestSlowSubscriberIsDroppedWithoutDelayingOthers(t *testing.T) {
	const queue, pushes = 4, 20
	tm := roomstest.NewTimers()
	r := startRoom(t, openStore(t), rooms.Options{AfterFunc: tm.AfterFunc})
	slow, _ := subscribeQueue(t, r, "slow", "slow@example.com", queue) // never reads
	// fast is sent the changes and slow's leave; twice that is room to spare.
	fast, _ := subscribeQueue(t, r, "fast", "fast@example.com", 2*pushes)
	// Every push completes although slow never reads: the room does not wait.
	for i := 1; i <= pushes; i++ {
		if _, _, err := r.Push(context.Background(), onePush(fmt.Sprintf("n%d", i), "x"), ""); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-slow.Done():
	case <-time.After(waitFor):
		t.Fatal("slow subscriber was not dropped")
	}
	if code, reason := slow.CloseStatus(); code != livewire.CloseResync || reason == "" {
		t.Fatalf("slow closed with %d %q, want %d", code, reason, livewire.CloseResync)
	}
	// slow joined and left within one tick: the batch shows fast alone.
	tm.Fire()
	sawLeave := false
	for v := int64(1); v <= pushes || !sawLeave; {
		switch m := next(t, fast); {
		case m.Type == livewire.TypePresence && !sawLeave && m.Count == 1 && len(m.Left) == 0 && len(m.Joined) == 1 && m.Joined[0].ID == "fast":
			sawLeave = true
		case m.Type == livewire.TypeChanges && m.ServerVersion == v:
			v++
		default:
			t.Fatalf("fast got %+v, want the change of version %d or slow's leave", m, v)
		}
	}
	noMessage(t, fast)
	select {
	case <-fast.Done():
		t.Fatalf("fast was dropped too")
	default:
	}
	if n := r.Subscribers(); n != 1 {
		t.Fatalf("subscribers=%d, want 1", n)
	}
}

// gatedStore holds the room's first commit until release is closed, so
// that the pushes after it queue up in the room.
type gatedStore struct {
	*bolt.DB
	started chan struct{} // closed when the first commit has reached the store
	release chan struct{}
	commits atomic.Int32
}

func newGatedStore(db *bolt.DB) *gatedStore {
	return &gatedStore{DB: db, started: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedStore) ApplyPushes(ctx context.Context, id string, in []persist.PushInput) ([]persist.Applied, error) {
	if g.commits.Add(1) == 1 {
		close(g.started)
		<-g.release
	}
	return g.DB.ApplyPushes(ctx, id, in)
}

// arrivalClock is a room clock that tells arrived of every reading. A room
// reads its clock when it starts and when its loop takes a request, so in a
// test that only pushes, each reading after the start is a push queued.
func arrivalClock(arrived chan<- struct{}) func() time.Time {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		arrived <- struct{}{}
		return t0
	}
}

// await waits for ch, failing after waitFor.
func await(tb testing.TB, ch <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		tb.Fatalf("%s did not happen within %v", what, waitFor)
	}
}

type pushOutcome struct {
	version int64
	err     error
}

// queuePush pushes p in a goroutine of its own and returns once the room's
// loop has taken it (arrived).
func queuePush(tb testing.TB, r *rooms.Room, arrived <-chan struct{}, p *board.Push) <-chan pushOutcome {
	tb.Helper()
	out := make(chan pushOutcome, 1)
	go func() {
		v, _, err := r.Push(context.Background(), p, "")
		out <- pushOutcome{v, err}
	}()
	await(tb, arrived, "the push's arrival")
	return out
}

// result waits for a push's outcome.
func result(tb testing.TB, c <-chan pushOutcome) pushOutcome {
	tb.Helper()
	select {
	case o := <-c:
		return o
	case <-time.After(waitFor):
		tb.Fatalf("no answer to a push within %v", waitFor)
	}
	return pushOutcome{}
}

// TestQueuedPushesApplyInArrivalOrder: pushes that queue up behind a
// commit are applied, and numbered, in the order the room took them.
func TestQueuedPushesApplyInArrivalOrder(t *testing.T) {
	store := newGatedStore(openStore(t))
	arrived := make(chan struct{}, 16)
	r := startRoom(t, store, rooms.Options{Now: arrivalClock(arrived)})
	await(t, arrived, "the room's start")
	first := queuePush(t, r, arrived, onePush("first", "x"))
	await(t, store.started, "the first commit")
	queued := make([]<-chan pushOutcome, 5)
	for i := range queued {
		queued[i] = queuePush(t, r, arrived, onePush(fmt.Sprintf("n%d", i), "x"))
	}
	close(store.release)
	if o := result(t, first); o.err != nil || o.version != 1 {
		t.Fatalf("first push: version=%d err=%v, want 1", o.version, o.err)
	}
	for i, c := range queued {
		if o, want := result(t, c), int64(i+2); o.err != nil || o.version != want {
			t.Fatalf("queued push %d: version=%d err=%v, want %d", i, o.version, o.err, want)
		}
	}
	ch, err := store.ChangesSince(context.Background(), "b1", 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ch.Notes {
		if want := fmt.Sprintf("n%d", i); n.ID != want || n.Version != int64(i+2) {
			t.Fatalf("stored note %d: %s at version %d, want %s at %d", i, n.ID, n.Version, want, i+2)
		}
	}
}

// TestCloseFailsQueuedPushes: Close lets the commit in flight finish and
// fails the pushes queued behind it with EUNAVAILABLE; none of them is
// applied, and none is told it succeeded.
func TestCloseFailsQueuedPushes(t *testing.T) {
	store := newGatedStore(openStore(t))
	arrived := make(chan struct{}, 16)
	r := startRoom(t, store, rooms.Options{Now: arrivalClock(arrived)})
	await(t, arrived, "the room's start")
	first := queuePush(t, r, arrived, onePush("first", "x"))
	await(t, store.started, "the first commit")
	queued := []<-chan pushOutcome{
		queuePush(t, r, arrived, onePush("q1", "x")),
		queuePush(t, r, arrived, onePush("q2", "x")),
	}
	// Close with a context already over: it starts the shutdown and
	// returns; the commit is released only then.
	over, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.Close(over)
	close(store.release)
	ctx, cancelWait := context.WithTimeout(context.Background(), waitFor)
	defer cancelWait()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if o := result(t, first); o.err != nil || o.version != 1 {
		t.Fatalf("the push being committed: version=%d err=%v, want 1", o.version, o.err)
	}
	for i, c := range queued {
		if o := result(t, c); board.ErrorCode(o.err) != board.EUNAVAILABLE || o.version != 0 {
			t.Fatalf("queued push %d: version=%d err=%v, want EUNAVAILABLE", i, o.version, o.err)
		}
	}
	if v, err := store.CurrentVersion(context.Background(), "b1"); err != nil || v != 1 {
		t.Fatalf("stored version=%d err=%v, want 1", v, err)
	}
}

// countingStore counts the reads a pull makes.
type countingStore struct {
	*bolt.DB
	reads atomic.Int32
}

func (c *countingStore) ChangesSince(ctx context.Context, id string, since int64) (*board.Changes, error) {
	c.reads.Add(1)
	return c.DB.ChangesSince(ctx, id, since)
}

func TestPull(t *testing.T) {
	store := &countingStore{DB: openStore(t)}
	r := startRoom(t, store, rooms.Options{})
	for i := range 3 {
		if _, _, err := r.Push(context.Background(), onePush(fmt.Sprintf("n%d", i), "x"), ""); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("NoChangeWithoutStorage", func(t *testing.T) {
		res, err := r.Pull(context.Background(), 3)
		if err != nil || res.Changes != nil || res.ServerVersion != 3 {
			t.Fatalf("Pull(3)=%+v err=%v, want {serverVersion 3} alone", res, err)
		}
		if n := store.reads.Load(); n != 0 {
			t.Fatalf("a pull at the current version read storage %d times", n)
		}
	})
	t.Run("Since", func(t *testing.T) {
		res, err := r.Pull(context.Background(), 1)
		if err != nil || res.Changes == nil || len(res.Changes.Notes) != 2 || res.ServerVersion != 3 {
			t.Fatalf("Pull(1)=%+v err=%v, want the two later notes", res, err)
		}
	})
	t.Run("AheadOfServerResets", func(t *testing.T) {
		// A client ahead of the server (its data was restored from an
		// older backup) gets the full state to start again from.
		res, err := r.Pull(context.Background(), 5)
		if err != nil || res.Changes == nil || !res.Changes.Reset || res.ServerVersion != 3 || len(res.Changes.Notes) != 3 {
			t.Fatalf("Pull(5)=%+v err=%v, want a reset to the 3 notes of version 3", res, err)
		}
	})
	t.Run("ErrNegative", func(t *testing.T) {
		if _, err := r.Pull(context.Background(), -1); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("err=%v, want EINVALID", err)
		}
	})
}

func TestPresence(t *testing.T) {
	tm := roomstest.NewTimers()
	r := startRoom(t, openStore(t), rooms.Options{AfterFunc: tm.AfterFunc})
	a, wa := subscribe(t, r, "A", "a@example.com")
	if len(wa.Present) != 0 || wa.PresentCount != 0 || wa.PresentMore {
		t.Fatalf("first subscriber sees %+v, want nobody", wa)
	}
	b, wb := subscribe(t, r, "B", "b@example.com")
	if len(wb.Present) != 1 || wb.Present[0] != (livewire.Presence{ID: "A", Email: "a@example.com", Color: rooms.ColorFor("a@example.com")}) || wb.PresentCount != 1 {
		t.Fatalf("B sees %+v present, want A", wb)
	}
	noMessage(t, a) // joins wait for the tick
	tm.Fire()
	m := next(t, a)
	if m.Type != livewire.TypePresence || m.Count != 2 || len(m.Joined) != 2 || m.Joined[0].ID != "A" || m.Joined[1] != (livewire.Presence{ID: "B", Email: "b@example.com", Color: b.Color()}) || m.Left != nil || m.Idle != nil {
		t.Fatalf("A got %+v, want one batch with A and B joined", m)
	}
	if m := next(t, b); m.Type != livewire.TypePresence || len(m.Joined) != 2 {
		t.Fatalf("B got %+v, want the same batch", m)
	}
	checkPointer(t, a, b)
	checkLeave(t, tm, a, b)
	if c := rooms.ColorFor("a@example.com"); len(c) != 7 || c[0] != '#' || c != a.Color() {
		t.Fatalf("ColorFor=%q, want the subscriber's #rrggbb colour", c)
	}
}

// checkLeave: b leaving (twice is safe) reaches a in the next tick's
// batch, and b is closed normally.
func checkLeave(t *testing.T, tm *roomstest.Timers, a, b *rooms.Subscriber) {
	t.Helper()
	b.Leave()
	b.Leave() // twice is safe
	tm.Fire()
	if m := next(t, a); m.Type != livewire.TypePresence || !slices.Equal(m.Left, []string{"B"}) || m.Joined != nil || m.Count != 1 {
		t.Fatalf("A got %+v, want B's leave and a count of 1", m)
	}
	if code, _ := b.CloseStatus(); code != livewire.CloseNormal {
		t.Fatalf("left subscriber closed with %d, want %d", code, livewire.CloseNormal)
	}
}

// checkPointer: a's pointer reaches b with a's identity, not a itself,
// and a pointer out of bounds is refused.
func checkPointer(t *testing.T, a, b *rooms.Subscriber) {
	t.Helper()
	if err := a.Pointer(10, 20); err != nil {
		t.Fatal(err)
	}
	if m := next(t, b); m.Type != livewire.TypePointer || m.ID != "A" || m.Email != "a@example.com" || m.X != 10 || m.Y != 20 {
		t.Fatalf("B got %+v, want A's pointer at 10,20", m)
	}
	noMessage(t, a) // a pointer does not come back to its sender
	if err := a.Pointer(0, 1e10); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("pointer beyond 1e9: err=%v, want EINVALID", err)
	}
}

// TestEditing: who has which note open in the editor reaches the others,
// joins late in the hello, and ends with the editor or the connection.
func TestEditing(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	b, _ := subscribe(t, r, "B", "b@example.com")
	if err := a.Editing("n1"); err != nil {
		t.Fatal(err)
	}
	if m := next(t, b); m.Type != livewire.TypeEditing || m.ID != "A" || m.Email != "a@example.com" || m.Color != a.Color() || m.NoteID != "n1" {
		t.Fatalf("B got %+v, want A editing n1", m)
	}
	// The same state again tells nobody; closing the editor does.
	if err := a.Editing("n1"); err != nil {
		t.Fatal(err)
	}
	if err := b.Editing("n2"); err != nil {
		t.Fatal(err)
	}
	if m := next(t, a); m.Type != livewire.TypeEditing || m.ID != "B" || m.NoteID != "n2" {
		t.Fatalf("A got %+v, want B editing n2 (and nothing for its own repeat)", m)
	}
	_, wc := subscribe(t, r, "C", "c@example.com")
	want := []livewire.Presence{
		{ID: "A", Email: "a@example.com", Color: a.Color(), Editing: "n1"},
		{ID: "B", Email: "b@example.com", Color: b.Color(), Editing: "n2"},
	}
	if !reflect.DeepEqual(wc.Present, want) {
		t.Fatalf("C's hello lists %+v, want %+v", wc.Present, want)
	}
	if err := a.Editing(""); err != nil {
		t.Fatal(err)
	}
	if m := nextOf(t, b, livewire.TypeEditing); m.ID != "A" || m.NoteID != "" {
		t.Fatalf("B got %+v, want A's editor closed", m)
	}
	if err := a.Editing(strings.Repeat("x", board.MaxIDLen+1)); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("a note ID of %d bytes: err=%v, want EINVALID", board.MaxIDLen+1, err)
	}
	b.Leave()
	_, wd := subscribe(t, r, "D", "d@example.com")
	if len(wd.Present) != 2 || wd.Present[0].Editing != "" || wd.Present[1].ID != "C" {
		t.Fatalf("D's hello lists %+v, want A (no longer editing) and C: B's editing ended with B", wd.Present)
	}
}

func TestPointerThrottle(t *testing.T) {
	t.Run("Coalesced", func(t *testing.T) {
		c := newClock()
		r := startRoom(t, openStore(t), rooms.Options{Now: c.Now, PointerInterval: time.Hour})
		a, _ := subscribe(t, r, "A", "a@example.com")
		b, _ := subscribe(t, r, "B", "b@example.com")
		for i := range 50 {
			if err := a.Pointer(float64(i), 0); err != nil {
				t.Fatal(err)
			}
		}
		if m := next(t, b); m.X != 0 {
			t.Fatalf("first pointer x=%v, want 0", m.X)
		}
		noMessage(t, b) // the other 49 are held back within the interval
		c.Advance(time.Hour)
		if err := a.Pointer(99, 0); err != nil {
			t.Fatal(err)
		}
		if m := next(t, b); m.X != 99 {
			t.Fatalf("pointer after the interval x=%v, want the latest, 99", m.X)
		}
		noMessage(t, b)
		a.Leave() // stops the held-back update
	})
	t.Run("LatestPositionArrives", func(t *testing.T) {
		r := startRoom(t, openStore(t), rooms.Options{PointerInterval: 20 * time.Millisecond})
		a, _ := subscribe(t, r, "A", "a@example.com")
		b, _ := subscribe(t, r, "B", "b@example.com")
		for i := range 10 {
			if err := a.Pointer(float64(i), float64(i)); err != nil {
				t.Fatal(err)
			}
		}
		// The last position is delivered when the interval ends, so a
		// pointer that stops moving is shown where it stopped.
		var last msg
		for last.X != 9 {
			last = nextOf(t, b, livewire.TypePointer)
		}
		if last.Y != 9 {
			t.Fatalf("last pointer %+v, want 9,9", last)
		}
	})
}

func TestKick(t *testing.T) {
	tm := roomstest.NewTimers()
	r := startRoom(t, openStore(t), rooms.Options{AfterFunc: tm.AfterFunc})
	gone1, _ := subscribe(t, r, "G1", "gone@example.com")
	gone2, _ := subscribe(t, r, "G2", "gone@example.com")
	stay, _ := subscribe(t, r, "S", "stay@example.com")
	r.Kick("gone@example.com", "removed")
	for _, s := range []*rooms.Subscriber{gone1, gone2} {
		if code, _ := s.CloseStatus(); code != livewire.CloseForbidden {
			t.Fatalf("%s closed with %d, want %d", s.ID(), code, livewire.CloseForbidden)
		}
	}
	tm.Fire()
	// All three joined and two left within one tick: stay is told of
	// itself only, and the count is one.
	if m := nextOf(t, stay, livewire.TypePresence); len(m.Joined) != 1 || m.Joined[0].ID != "S" || len(m.Left) != 0 || m.Count != 1 {
		t.Fatalf("stay got %+v, want only its own join and a count of 1", m)
	}
	if r.Subscribers() != 1 {
		t.Fatalf("subscribers=%d, want 1", r.Subscribers())
	}
}

func TestCloseDropsEveryoneGoingAway(t *testing.T) {
	r, err := rooms.Start(context.Background(), openStore(t), "b1", rooms.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := subscribe(t, r, "A", "a@example.com")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if code, _ := s.CloseStatus(); code != livewire.CloseGoingAway {
		t.Fatalf("closed with %d, want %d", code, livewire.CloseGoingAway)
	}
	if _, _, err := r.Push(ctx, onePush("n", "x"), ""); !errors.Is(err, rooms.ErrClosed) {
		t.Fatalf("push after Close: err=%v, want ErrClosed", err)
	}
	if _, _, err := r.Subscribe(ctx, rooms.Member{ConnID: "B", Email: "b@example.com", Sink: roomstest.NewQueue(1)}); !errors.Is(err, rooms.ErrClosed) {
		t.Fatalf("subscribe after Close: err=%v, want ErrClosed", err)
	}
	s.Leave() // after Close: returns at once
}

func TestStopIfIdle(t *testing.T) {
	c := newClock()
	r := startRoom(t, openStore(t), rooms.Options{Now: c.Now})
	s, _ := subscribe(t, r, "A", "a@example.com")
	c.Advance(time.Hour)
	if r.StopIfIdle(c.Now().Add(-time.Minute)) {
		t.Fatal("a room with a subscriber was stopped")
	}
	s.Leave()
	if r.StopIfIdle(c.Now().Add(-time.Minute)) {
		t.Fatal("a room used a moment ago was stopped")
	}
	c.Advance(2 * time.Minute)
	if !r.StopIfIdle(c.Now().Add(-time.Minute)) {
		t.Fatal("an idle room was not stopped")
	}
	if _, err := r.Pull(context.Background(), 0); !errors.Is(err, rooms.ErrClosed) {
		t.Fatalf("pull on a stopped room: err=%v, want ErrClosed", err)
	}
}

func TestStartUnclaimedBoard(t *testing.T) {
	db := openStore(t)
	if _, err := rooms.Start(context.Background(), db, "ghost", rooms.Options{}); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("err=%v, want ENOTFOUND", err)
	}
}

// memStore is a SyncStore without disk, so that a benchmark measures the
// room's fan-out rather than fsync.
type memStore struct {
	mu      sync.Mutex
	version int64
}

func (m *memStore) ApplyPushes(_ context.Context, id string, in []persist.PushInput) ([]persist.Applied, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]persist.Applied, len(in))
	for i, p := range in {
		m.version++
		notes := make([]board.Note, len(p.Push.Notes.Upserted))
		for j, n := range p.Push.Notes.Upserted {
			n.Version = m.version
			notes[j] = n
		}
		out[i] = persist.Applied{Version: m.version, Changes: &board.Changes{
			Board: board.Header{ID: id, Version: m.version}, Notes: notes, DeletedNoteIDs: []string{},
			TrackerItems: []board.TrackerItem{}, DeletedTrackerItemIDs: []string{}, ServerVersion: m.version,
		}}
	}
	return out, nil
}

func (m *memStore) ChangesSince(context.Context, string, int64) (*board.Changes, error) {
	return nil, errors.New("not used")
}
func (m *memStore) ScanChangesSince(context.Context, string, int64, func(*persist.ChangePart) error) error {
	return errors.New("not used")
}
func (m *memStore) CurrentVersion(context.Context, string) (int64, error) { return 0, nil }
func (m *memStore) BoardState(context.Context, string) (*board.State, error) {
	return nil, errors.New("not used")
}
func (m *memStore) PruneTombstones(context.Context, time.Time) (int, error)      { return 0, nil }
func (m *memStore) SweepIdempotencyKeys(context.Context, time.Time) (int, error) { return 0, nil }
func (m *memStore) PruneRevisions(context.Context, time.Time, int) (int, error)  { return 0, nil }

// BenchmarkFanOut1000 is one single-note push reaching 1,000 subscribers,
// each a channel drained by its own goroutine: the room's own cost. Fan-out
// to real sockets is BenchmarkLiveFanOut1000 in transport, and the load tool.
func BenchmarkFanOut1000(b *testing.B) {
	const n = 1000
	r := startRoom(b, &memStore{}, rooms.Options{})
	var received, target atomic.Int64
	allGot := make(chan struct{}, 1)
	changes := []byte(`{"type":"changes"`)
	for i := range n {
		s, _ := subscribeQueue(b, r, fmt.Sprintf("c%d", i), fmt.Sprintf("u%d@example.com", i), 2*n)
		go func() {
			for {
				select {
				case m := <-messages(s):
					if bytes.HasPrefix(m, changes) && received.Add(1) == target.Load() {
						allGot <- struct{}{}
					}
				case <-s.Done():
					return
				}
			}
		}()
	}
	p := onePush("n", "a note of ordinary size, a sentence or two of text")
	for b.Loop() {
		target.Add(n)
		if _, _, err := r.Push(context.Background(), p, ""); err != nil {
			b.Fatal(err)
		}
		<-allGot
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkPullNoChange is the room's answer to a client that is up to date.
func BenchmarkPullNoChange(b *testing.B) {
	r := startRoom(b, openStore(b), rooms.Options{})
	if _, _, err := r.Push(context.Background(), onePush("n", "x"), ""); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if res, err := r.Pull(context.Background(), 1); err != nil || res.Changes != nil {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkPushOneBoard50Writers is 50 pushes arriving at once on one board
// (real bbolt, fsync on): the room commits the ones that queue up during an
// fsync together, so they do not cost 50 fsyncs.
func BenchmarkPushOneBoard50Writers(b *testing.B) {
	r := startRoom(b, openStore(b), rooms.Options{})
	const writers = 50
	for b.Loop() {
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				if _, _, err := r.Push(context.Background(), onePush(fmt.Sprintf("n%d", i), "x"), ""); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.N*writers)/b.Elapsed().Seconds(), "pushes/s")
}

// TestLargeRoomFanOut covers a room big enough to split its fan-out between
// goroutines: every subscriber gets the change exactly once, and the ones
// whose sinks are full are dropped, wherever they sit in the room. The
// change goes to a prime number of subscribers, so no split into two, three
// or four parts comes out even and the last part is never a whole share
// (GOMAXPROCS is set to 4 so that the fan-out splits on any machine).
func TestLargeRoomFanOut(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, kept := range []int{257, 389, 521} { // 2, 3 and 4 parts of 128 or more
		t.Run(fmt.Sprint(kept), func(t *testing.T) { testLargeRoomFanOut(t, kept) })
	}
}

func testLargeRoomFanOut(t *testing.T, kept int) {
	const fullEvery = 25
	changes := []byte(`"type":"changes"`)
	tm := roomstest.NewTimers()
	r := startRoom(t, openStore(t), rooms.Options{AfterFunc: tm.AfterFunc})
	var subs []*rooms.Subscriber
	full := func(i int) bool { return i%fullEvery == fullEvery-1 }
	for i, n := 0, 0; n < kept; i++ {
		capacity := 3 * kept // joins of those after it, the change, leaves
		if full(i) {
			capacity = 0
		} else {
			n++
		}
		s, _ := subscribeQueue(t, r, fmt.Sprintf("c%d", i), fmt.Sprintf("u%d@example.com", i), capacity)
		subs = append(subs, s)
	}
	// A full sink is found at the first message sent to it: the presence
	// batch of the joins. Push once they are dropped, so that the change
	// goes to kept subscribers exactly.
	tm.Fire()
	for i, s := range subs {
		if full(i) {
			select {
			case <-s.Done():
			case <-time.After(waitFor):
				t.Fatalf("subscriber %d with a full sink was not dropped", i)
			}
		}
	}
	if _, _, err := r.Push(context.Background(), onePush("n", "x"), ""); err != nil {
		t.Fatal(err)
	}
	for i, s := range subs {
		if full(i) {
			continue
		}
		// Raw bytes, not nextOf: decoding the joins before it would be most
		// of the test's time.
		for got := false; !got; {
			select {
			case b := <-messages(s):
				if got = bytes.Contains(b, changes); got {
					var m msg
					if err := json.Unmarshal(b, &m); err != nil || m.ServerVersion != 1 {
						t.Fatalf("subscriber %d got %s (%v), want the change of version 1", i, b, err)
					}
				}
			case <-time.After(waitFor):
				t.Fatalf("subscriber %d got no change within %v", i, waitFor)
			}
		}
		for {
			select {
			case b := <-messages(s):
				if bytes.Contains(b, changes) {
					t.Fatalf("subscriber %d got the change twice", i)
				}
				continue
			default:
			}
			break
		}
	}
	if got := r.Subscribers(); got != kept {
		t.Fatalf("%d subscribers left, want %d", got, kept)
	}
}

// TestSendTo: a message for one person reaches each of their connections
// and nobody else's, in order with the room's other messages.
func TestSendTo(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	a1, _ := subscribe(t, r, "A1", "a@example.com")
	a2, _ := subscribe(t, r, "A2", "a@example.com")
	b, _ := subscribe(t, r, "B", "b@example.com")
	if !r.SendTo("a@example.com", rooms.NewMessage([]byte(`{"type":"access","canEdit":true}`))) {
		t.Fatal("SendTo(a)=false, want true")
	}
	if r.SendTo("nobody@example.com", rooms.NewMessage([]byte(`{"type":"access","canEdit":true}`))) {
		t.Fatal("SendTo(nobody)=true, want false")
	}
	for _, s := range []*rooms.Subscriber{a1, a2} {
		nextOf(t, s, livewire.TypeAccess)
	}
	// b's next change comes with no access message before it.
	if _, _, err := r.Push(context.Background(), onePush("n1", "x"), ""); err != nil {
		t.Fatal(err)
	}
	for {
		m := next(t, b)
		if m.Type == livewire.TypeAccess {
			t.Fatalf("b got %+v, want no access message", m)
		}
		if m.Type == livewire.TypeChanges {
			break
		}
	}
}
