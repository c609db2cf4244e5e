package rooms_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/rooms"
	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

// presenceRoom starts a room whose timers the test fires and whose clock it
// moves.
func presenceRoom(t *testing.T, opts rooms.Options) (*rooms.Room, *roomstest.Timers, func(time.Duration)) {
	t.Helper()
	tm := roomstest.NewTimers()
	c := newClock()
	opts.AfterFunc, opts.Now = tm.AfterFunc, c.Now
	return startRoom(t, openStore(t), opts), tm, c.Advance
}

// settled returns every message the room sent s so far: a who asked now
// is answered after them (the room sends a subscriber's messages in
// order), so nothing depends on when the fan-out runs.
func settled(t *testing.T, s *rooms.Subscriber) []msg {
	t.Helper()
	if err := s.Who("", 1); err != nil {
		t.Fatal(err)
	}
	var got []msg
	for {
		m := next(t, s)
		if m.Type == livewire.TypeWho {
			return got
		}
		got = append(got, m)
	}
}

// drain drops what the room sent s so far.
func drain(t *testing.T, s *rooms.Subscriber) { t.Helper(); settled(t, s) }

// noneOf checks that the room sent s nothing of type typ so far.
func noneOf(t *testing.T, s *rooms.Subscriber, typ string) {
	t.Helper()
	for _, m := range settled(t, s) {
		if m.Type == typ {
			t.Fatalf("%s got %+v, want no %s", s.ID(), m, typ)
		}
	}
}

// TestHelloPageAndWho: a hello lists the first HelloPresent of the others
// in ID order with the full count; who pages through the rest (after an
// ID, limit at its edges), leaving the asker out, and says where to go on.
func TestHelloPageAndWho(t *testing.T) {
	r, _, _ := presenceRoom(t, rooms.Options{})
	const n = rooms.HelloPresent + 1
	for i := range n {
		subscribe(t, r, fmt.Sprintf("c%03d", i), fmt.Sprintf("u%d@example.com", i))
	}
	// n others: one more than the page.
	me, w := subscribe(t, r, "me", "me@example.com")
	if len(w.Present) != rooms.HelloPresent || w.PresentCount != n || !w.PresentMore || w.Present[0].ID != "c000" || w.Present[rooms.HelloPresent-1].ID != "c099" {
		t.Fatalf("hello lists %d (first %s), count %d, more %v; want %d from c000, count %d, more", len(w.Present), w.Present[0].ID, w.PresentCount, w.PresentMore, rooms.HelloPresent, n)
	}
	helloExactlyAPage(t)
	whoPages(t, me, n)
	whoRefusesBadArguments(t, me)
}

// helloExactlyAPage: a hello with exactly HelloPresent others lists them
// all, not cut.
func helloExactlyAPage(t *testing.T) {
	t.Helper()
	r, _, _ := presenceRoom(t, rooms.Options{})
	for i := range rooms.HelloPresent {
		subscribe(t, r, fmt.Sprintf("c%03d", i), "x@example.com")
	}
	if _, w := subscribe(t, r, "zz", "z@example.com"); len(w.Present) != rooms.HelloPresent || w.PresentMore || w.PresentCount != rooms.HelloPresent {
		t.Fatalf("with %d others: %d listed, more=%v, count %d", rooms.HelloPresent, len(w.Present), w.PresentMore, w.PresentCount)
	}
}

// whoPages: me's who, among n others c000…, starts after an ID (between
// IDs too), pages through every other once in order, and leaves me out.
func whoPages(t *testing.T, me *rooms.Subscriber, n int) {
	t.Helper()
	if err := me.Who("c099", 1); err != nil {
		t.Fatal(err)
	}
	if m := next(t, me); m.Type != livewire.TypeWho || len(m.Present) != 1 || m.Present[0].ID != "c100" || m.Next != "" {
		t.Fatalf("who after c099: %+v, want c100 and the end (me left out)", m)
	}
	// All of them, in pages of 40: every other once, in order.
	var seen []string
	after := ""
	for {
		if err := me.Who(after, 40); err != nil {
			t.Fatal(err)
		}
		m := next(t, me)
		for _, p := range m.Present {
			seen = append(seen, p.ID)
		}
		if m.Next == "" {
			break
		}
		after = m.Next
	}
	if len(seen) != n || !slices.IsSorted(seen) || slices.Contains(seen, "me") {
		t.Fatalf("paging saw %d (%v…), want %d others in order", len(seen), seen[:3], n)
	}
	// An "after" between IDs starts at the next one.
	if err := me.Who("c05", rooms.MaxWhoLimit); err != nil {
		t.Fatal(err)
	}
	if m := next(t, me); len(m.Present) != 51 || m.Present[0].ID != "c050" || m.Next != "" {
		t.Fatalf("who after c05: %d from %s next %q, want 51 from c050", len(m.Present), m.Present[0].ID, m.Next)
	}
}

// whoRefusesBadArguments: who refuses a limit past its edges and an after
// longer than an ID, as EINVALID.
func whoRefusesBadArguments(t *testing.T, me *rooms.Subscriber) {
	t.Helper()
	for _, bad := range []int{0, -1, rooms.MaxWhoLimit + 1} {
		if err := me.Who("", bad); board.ErrorCode(err) != board.EINVALID || !strings.Contains(board.ErrorMessage(err), "limit") {
			t.Fatalf("limit %d: err=%v, want EINVALID on limit", bad, err)
		}
	}
	if err := me.Who(strings.Repeat("x", 65), 1); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("after of 65 bytes: err=%v, want EINVALID", err)
	}
}

// TestPresenceBatchCoalesces: one batch per tick; a connection that
// joined and left within it appears in neither list, one that went idle
// and came back in neither; the batch is cut at MaxBatchEntries with an
// exact count.
func TestPresenceBatchCoalesces(t *testing.T) {
	r, tm, advance := presenceRoom(t, rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	b, _ := subscribe(t, r, "B", "b@example.com")
	brief, _ := subscribe(t, r, "C", "c@example.com")
	brief.Leave()
	tm.Fire()
	if m := next(t, a); m.Type != livewire.TypePresence || len(m.Joined) != 2 || m.Joined[1].ID != "B" || m.Left != nil || m.Count != 2 {
		t.Fatalf("A got %+v, want A and B joined (C came and went), count 2", m)
	}
	noneOf(t, a, livewire.TypePresence)
	drain(t, b)

	// Idle and back within one tick: nothing to tell.
	advance(rooms.IdleAfter)
	tm.Fire() // the idle sweep: A and B idle
	if err := a.Pointer(1, 1); err != nil {
		t.Fatal(err)
	}
	drain(t, b) // A's pointer
	tm.Fire()   // the tick
	if m := next(t, b); m.Type != livewire.TypePresence || !slices.Equal(m.Idle, []string{"B"}) || m.Active != nil {
		t.Fatalf("B got %+v, want only B idle (A came back within the tick)", m)
	}
	drain(t, a)

	// A wave past the batch's bound: cut, with the count exact.
	for i := range rooms.MaxBatchEntries + 5 {
		subscribe(t, r, fmt.Sprintf("w%03d", i), "w@example.com")
	}
	tm.Fire()
	m := nextOf(t, a, livewire.TypePresence)
	if len(m.Joined) != rooms.MaxBatchEntries || !m.More || m.Count != rooms.MaxBatchEntries+7 {
		t.Fatalf("wave: %d joined, more=%v, count %d; want %d, more, %d", len(m.Joined), m.More, m.Count, rooms.MaxBatchEntries, rooms.MaxBatchEntries+7)
	}
}

// TestIdleByClock: a connection silent for IdleAfter shows idle in the
// next batch, not a moment before; any activity (active, editing, view,
// push) brings it back.
func TestIdleByClock(t *testing.T) {
	r, tm, advance := presenceRoom(t, rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	b, _ := subscribe(t, r, "B", "b@example.com")
	tm.Fire()
	drain(t, a)
	drain(t, b)
	advance(rooms.IdleAfter - time.Millisecond)
	tm.Fire() // sweep: not yet
	tm.Fire()
	noneOf(t, a, livewire.TypePresence)
	advance(time.Millisecond)
	tm.Fire() // sweep
	tm.Fire() // tick
	if m := next(t, a); m.Type != livewire.TypePresence || !slices.Equal(m.Idle, []string{"A", "B"}) && !slices.Equal(m.Idle, []string{"B", "A"}) {
		t.Fatalf("A got %+v, want A and B idle", m)
	}
	drain(t, b)
	for _, act := range []struct {
		name string
		do   func(*rooms.Subscriber) error
	}{
		{"active", func(s *rooms.Subscriber) error { s.Active(); return nil }},
		{"editing", func(s *rooms.Subscriber) error { return s.Editing("n1") }},
		{"view", func(s *rooms.Subscriber) error { return s.View(1, 2, 1) }},
	} {
		if err := act.do(b); err != nil {
			t.Fatal(err)
		}
		drain(t, b) // a round trip: the loop has taken the message
		tm.Fire()
		if m := nextOf(t, a, livewire.TypePresence); !slices.Equal(m.Active, []string{"B"}) {
			t.Fatalf("after %s: A got %+v, want B active", act.name, m)
		}
		advance(rooms.IdleAfter)
		tm.Fire() // sweep
		tm.Fire() // tick
		if m := nextOf(t, a, livewire.TypePresence); !slices.Contains(m.Idle, "B") {
			t.Fatalf("after %s and %v: A got %+v, want B idle again", act.name, rooms.IdleAfter, m)
		}
		drain(t, b)
	}
	// A hello shows who is idle.
	_, w := subscribe(t, r, "C", "c@example.com")
	if len(w.Present) != 2 || !w.Present[0].Idle || !w.Present[1].Idle {
		t.Fatalf("C's hello %+v, want A and B idle", w.Present)
	}
}

// TestHiddenConnection: a hidden connection gets the others' batches but
// is in none, nor in a hello, a who or a count, and cannot be followed.
func TestHiddenConnection(t *testing.T) {
	r, tm, _ := presenceRoom(t, rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	q := roomstest.NewQueue(64)
	h, w, err := r.Subscribe(t.Context(), rooms.Member{ConnID: "H", Email: "link@example.com", Sink: q, Hidden: true})
	if err != nil {
		t.Fatal(err)
	}
	queues.Store(h, q)
	if len(w.Present) != 1 || w.PresentCount != 1 {
		t.Fatalf("hidden hello %+v, want A", w)
	}
	tm.Fire()
	if m := next(t, a); len(m.Joined) != 1 || m.Joined[0].ID != "A" || m.Count != 1 {
		t.Fatalf("A got %+v, want itself alone (H hidden)", m)
	}
	if m := next(t, h); m.Type != livewire.TypePresence || m.Count != 1 {
		t.Fatalf("H got %+v, want the batch", m)
	}
	_, wb := subscribe(t, r, "B", "b@example.com")
	if wb.PresentCount != 1 || wb.Present[0].ID != "A" {
		t.Fatalf("B's hello %+v, want A alone", wb)
	}
	if err := a.Follow("H"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("follow the hidden one: err=%v, want ENOTFOUND", err)
	}
	if err := h.Pointer(1, 1); err != nil {
		t.Fatal(err)
	}
	h.Leave()
	tm.Fire()
	if m := next(t, a); m.Type != livewire.TypePresence || m.Left != nil || len(m.Joined) != 1 || m.Joined[0].ID != "B" {
		t.Fatalf("A got %+v, want B's join, no pointer and no leave of H", m)
	}
}

// TestFollow: only followers get views, the latest at once and then every
// change (coalesced to one per ViewInterval); following "" ends it, and
// the followed one leaving ends it with "ended".
func TestFollow(t *testing.T) {
	r, tm, advance := presenceRoom(t, rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	f, _ := subscribe(t, r, "F", "f@example.com")
	o, _ := subscribe(t, r, "O", "o@example.com")
	if err := a.View(10, 20, 1.5); err != nil {
		t.Fatal(err)
	}
	if err := f.Follow("A"); err != nil {
		t.Fatal(err)
	}
	if m := next(t, f); m.Type != livewire.TypeView || m.ID != "A" || m.Email != "a@example.com" || m.X != 10 || m.Y != 20 || m.Zoom != 1.5 {
		t.Fatalf("F got %+v, want A's view at once", m)
	}
	// Within the interval views are held back; the latest goes when it ends.
	for i := range 5 {
		if err := a.View(float64(i), 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	noneOf(t, f, livewire.TypeView)
	advance(rooms.ViewInterval)
	tm.Fire()
	if m := nextOf(t, f, livewire.TypeView); m.X != 4 {
		t.Fatalf("F got %+v, want the latest view, x=4", m)
	}
	noneOf(t, o, livewire.TypeView) // not a follower: no views
	noneOf(t, a, livewire.TypeView)
	if err := f.Follow(""); err != nil {
		t.Fatal(err)
	}
	advance(rooms.ViewInterval)
	if err := a.View(7, 7, 1); err != nil {
		t.Fatal(err)
	}
	noneOf(t, f, livewire.TypeView)

	viewOnceIsOnce(t, a, o, advance)

	if err := f.Follow("A"); err != nil {
		t.Fatal(err)
	}
	nextOf(t, f, livewire.TypeView)
	a.Leave()
	if m := nextOf(t, f, livewire.TypeFollow); m.Type != livewire.TypeFollow || m.ID != "" || m.Ended != "A" {
		t.Fatalf("F got %+v, want the follow ended by A", m)
	}
	followRefusesBadIDs(t, f)
}

// TestViewLimits: coordinates within ±MaxCoordinate, zoom in (0, MaxZoom].
func TestViewLimits(t *testing.T) {
	r, _, _ := presenceRoom(t, rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	for _, c := range []struct {
		x, y, zoom float64
		field      string
	}{
		{board.MaxCoordinate + 1, 0, 1, "x"},
		{0, -board.MaxCoordinate - 1, 1, "y"},
		{0, 0, 0, "zoom"},
		{0, 0, -1, "zoom"},
		{0, 0, rooms.MaxZoom + 0.001, "zoom"},
	} {
		for name, f := range map[string]func(x, y, z float64) error{"view": a.View, "summon": a.Summon} {
			err := f(c.x, c.y, c.zoom)
			var e *board.Error
			if board.ErrorCode(err) != board.EINVALID || !errorsAs(err, &e) || e.Field != c.field {
				t.Fatalf("%s %v,%v zoom %v: err=%v, want EINVALID on %s", name, c.x, c.y, c.zoom, err, c.field)
			}
		}
	}
	for _, ok := range [][3]float64{{board.MaxCoordinate, -board.MaxCoordinate, rooms.MaxZoom}, {0, 0, 0.0001}} {
		if err := a.View(ok[0], ok[1], ok[2]); err != nil {
			t.Fatalf("view %v: %v", ok, err)
		}
	}
}

// TestSummon: everyone but the summoner gets the summon, with who sent it.
func TestSummon(t *testing.T) {
	r, _, _ := presenceRoom(t, rooms.Options{})
	o, _ := subscribe(t, r, "O", "owner@example.com")
	a, _ := subscribe(t, r, "A", "a@example.com")
	b, _ := subscribe(t, r, "B", "b@example.com")
	if err := o.Summon(5, 6, 2); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*rooms.Subscriber{a, b} {
		if m := next(t, s); m.Type != livewire.TypeSummon || m.ID != "O" || m.Email != "owner@example.com" || m.X != 5 || m.Y != 6 || m.Zoom != 2 {
			t.Fatalf("%s got %+v, want O's summon", s.ID(), m)
		}
	}
	noMessage(t, o)
}

// recordingRelay keeps the presence notes a room relays.
type recordingRelay struct {
	mu    sync.Mutex
	notes []rooms.Note
}

func (*recordingRelay) Committed(string, int64) <-chan error { return nil }
func (*recordingRelay) Current(time.Time) bool               { return false }
func (r *recordingRelay) Presence(_ string, n rooms.Note) {
	r.mu.Lock()
	r.notes = append(r.notes, n)
	r.mu.Unlock()
}

// take returns the notes relayed since the last take.
func (r *recordingRelay) take() []rooms.Note {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.notes
	r.notes = nil
	return n
}

func kinds(ns []rooms.Note) []rooms.NoteKind {
	var k []rooms.NoteKind
	for _, n := range ns {
		k = append(k, n.Kind)
	}
	return k
}

// TestPresenceAcrossNodes: other nodes' connections join, go idle and
// leave in the batches; a view crosses only once another node follows;
// a summon from another node reaches everyone here; a forgotten node's
// connections leave and end their followers' following.
func TestPresenceAcrossNodes(t *testing.T) {
	relay := &recordingRelay{}
	r, tm, advance := presenceRoom(t, rooms.Options{Relay: relay})
	a, _ := subscribe(t, r, "A", "a@example.com")
	if k := kinds(relay.take()); !slices.Equal(k, []rooms.NoteKind{rooms.NoteWho, rooms.NoteJoin}) {
		t.Fatalf("relayed %v, want who and A's join", k)
	}
	remoteJoinsInBatch(t, r, tm, a)
	// A follows R: n2 is told, and R's views then reach A.
	if err := a.Follow("R"); err != nil {
		t.Fatal(err)
	}
	if ns := relay.take(); len(ns) != 1 || ns[0].Kind != rooms.NoteFollow || ns[0].Presence.ID != "R" || !ns[0].On {
		t.Fatalf("relayed %+v, want a follow of R", ns)
	}
	r.Remote(rooms.Note{Kind: rooms.NoteView, Node: "n2", Presence: livewire.Presence{ID: "R", Email: "r@example.com"}, X: 3, Y: 4, Zoom: 0.5})
	if m := next(t, a); m.Type != livewire.TypeView || m.ID != "R" || m.X != 3 || m.Zoom != 0.5 {
		t.Fatalf("A got %+v, want R's view", m)
	}
	viewsCrossWhileFollowed(t, r, relay, a, advance)
	r.Remote(rooms.Note{Kind: rooms.NoteSummon, Node: "n2", Presence: livewire.Presence{ID: "R", Email: "r@example.com"}, X: 9, Y: 9, Zoom: 1})
	if m := next(t, a); m.Type != livewire.TypeSummon || m.ID != "R" || m.X != 9 {
		t.Fatalf("A got %+v, want R's summon", m)
	}
	r.ForgetNode("n2")
	a.Active() // a round trip: the node is forgotten and the tick armed
	if m := next(t, a); m.Type != livewire.TypeFollow || m.Ended != "R" {
		t.Fatalf("A got %+v, want its following of R ended", m)
	}
	tm.Fire()
	if m := nextOf(t, a, livewire.TypePresence); !slices.Equal(m.Left, []string{"R"}) || m.Count != 1 {
		t.Fatalf("A got %+v, want R's leave", m)
	}
}

// viewOnceIsOnce: o's view? of A sends A's latest view (x=7) once, and
// A's next view does not follow.
func viewOnceIsOnce(t *testing.T, a, o *rooms.Subscriber, advance func(time.Duration)) {
	t.Helper()
	// view?: once.
	if err := o.ViewOnce("A"); err != nil {
		t.Fatal(err)
	}
	if m := nextOf(t, o, livewire.TypeView); m.X != 7 {
		t.Fatalf("O got %+v, want A's view once", m)
	}
	advance(rooms.ViewInterval)
	if err := a.View(8, 8, 1); err != nil {
		t.Fatal(err)
	}
	noneOf(t, o, livewire.TypeView)
}

// followRefusesBadIDs: F (once A left) may not follow A, nobody, itself
// or an ID longer than any, nor ask view? without an ID.
func followRefusesBadIDs(t *testing.T, f *rooms.Subscriber) {
	t.Helper()
	for _, c := range []struct {
		id   string
		code string
	}{{"A", board.ENOTFOUND}, {"nobody", board.ENOTFOUND}, {"F", board.EINVALID}, {strings.Repeat("x", 65), board.EINVALID}} {
		if err := f.Follow(c.id); board.ErrorCode(err) != c.code {
			t.Fatalf("follow %.10q: err=%v, want %s", c.id, err, c.code)
		}
	}
	if err := f.ViewOnce(""); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("view? without id: err=%v, want EINVALID", err)
	}
}

// remoteJoinsInBatch: n2's R joins and goes idle, and its R2 joins and
// leaves, within one tick: A's batch lists A and R (idle), not R2.
func remoteJoinsInBatch(t *testing.T, r *rooms.Room, tm *roomstest.Timers, a *rooms.Subscriber) {
	t.Helper()
	r.Remote(rooms.Note{Kind: rooms.NoteJoin, Node: "n2", Presence: livewire.Presence{ID: "R", Email: "r@example.com"}})
	r.Remote(rooms.Note{Kind: rooms.NoteIdle, Node: "n2", Presence: livewire.Presence{ID: "R", Email: "r@example.com"}})
	r.Remote(rooms.Note{Kind: rooms.NoteJoin, Node: "n2", Presence: livewire.Presence{ID: "R2", Email: "r2@example.com"}})
	r.Remote(rooms.Note{Kind: rooms.NoteLeave, Node: "n2", Presence: livewire.Presence{ID: "R2", Email: "r2@example.com"}})
	tm.Fire()
	m := next(t, a)
	if m.Type != livewire.TypePresence || len(m.Joined) != 2 || m.Joined[1].ID != "R" || !m.Joined[1].Idle || m.Joined[1].Color != rooms.ColorFor("r@example.com") || m.Count != 2 || m.Left != nil {
		t.Fatalf("A got %+v, want A and R (idle) joined; R2 came and went", m)
	}
}

// viewsCrossWhileFollowed: A's own views cross only once n2 follows A,
// starting with the latest, and stop when n2 stops following.
func viewsCrossWhileFollowed(t *testing.T, r *rooms.Room, relay *recordingRelay, a *rooms.Subscriber, advance func(time.Duration)) {
	t.Helper()
	// A's own views cross only once n2 follows A, starting with the latest.
	advance(rooms.ViewInterval)
	if err := a.View(1, 1, 1); err != nil {
		t.Fatal(err)
	}
	r.Remote(rooms.Note{Kind: rooms.NoteFollow, Node: "n2", Presence: livewire.Presence{ID: "A"}, On: true})
	advance(rooms.ViewInterval)
	if err := a.View(2, 2, 1); err != nil {
		t.Fatal(err)
	}
	r.Remote(rooms.Note{Kind: rooms.NoteFollow, Node: "n2", Presence: livewire.Presence{ID: "A"}, On: false})
	advance(rooms.ViewInterval)
	if err := a.View(3, 3, 1); err != nil {
		t.Fatal(err)
	}
	a.Active() // a round trip: the notes above are relayed
	var xs []float64
	for _, n := range relay.take() {
		if n.Kind == rooms.NoteView {
			xs = append(xs, n.X)
		}
	}
	if !slices.Equal(xs, []float64{1, 2}) {
		t.Fatalf("A's views relayed at x=%v, want 1 (on the follow) and 2 (while followed)", xs)
	}
}

func errorsAs(err error, e **board.Error) bool { return errors.As(err, e) }
