package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/persist/persisttest"
	"corkboard/rooms"
	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

// cluster is several hubs (nodes) on one store instance, joined by a
// LocalBus; their slow timers never fire on their own (tests call Tick).
type cluster struct {
	hubs  []*hub.Hub
	ends  []*hub.LocalEnd
	clock *persisttest.Clock
	inval chan [3]string // node index, kind, key
}

func newCluster(tb testing.TB, n int, boards ...string) *cluster {
	tb.Helper()
	db, c, _ := persisttest.Open(tb, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), boards...)
	return startCluster(tb, db, c, n)
}

// startCluster starts n hubs on store.
func startCluster(tb testing.TB, store persist.SyncStore, c *persisttest.Clock, n int) *cluster {
	tb.Helper()
	bus := hub.NewLocalBus()
	cl := &cluster{clock: c, inval: make(chan [3]string, 16)}
	for i := range n {
		end := bus.End()
		h := hub.New(store, hub.Options{
			Now: c.Now, IdleTimeout: time.Hour, SweepEvery: -1,
			Bus: end, NodeID: fmt.Sprintf("node%d", i), PollEvery: -1, PointerFlush: time.Millisecond,
			OnInvalidate: func(kind, key string) { cl.inval <- [3]string{fmt.Sprint(i), kind, key} },
		})
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			if err := h.Close(ctx); err != nil {
				tb.Errorf("hub %d Close: %v", i, err)
			}
		})
		cl.hubs = append(cl.hubs, h)
		cl.ends = append(cl.ends, end)
	}
	return cl
}

// liveMsg is what a test looks at in a live message.
type liveMsg struct {
	Type          string           `json:"type"`
	ID            string           `json:"id"`
	Since         int64            `json:"since"`
	ServerVersion int64            `json:"serverVersion"`
	Reset         bool             `json:"reset"`
	X             float64          `json:"x"`
	Y             float64          `json:"y"`
	NoteID        string           `json:"noteId"`
	Events        []livewire.Event `json:"events"`
	Notes         []struct {
		ID string `json:"id"`
	} `json:"notes"`
	Joined []livewire.Presence `json:"joined"`
	Left   []string            `json:"left"`
	Zoom   float64             `json:"zoom"`
	Ended  string              `json:"ended"`
}

// waitPresence waits for a presence batch of q listing id in list
// ("joined" or "left").
func waitPresence(tb testing.TB, q *roomstest.Queue, list, id string) {
	tb.Helper()
	for {
		m := next(tb, q, livewire.TypePresence)
		switch {
		case list == "joined" && slices.ContainsFunc(m.Joined, func(p livewire.Presence) bool { return p.ID == id }),
			list == "left" && slices.Contains(m.Left, id):
			return
		}
	}
}

// next returns the next message of q whose type is one of types, skipping
// the others.
func next(tb testing.TB, q *roomstest.Queue, types ...string) liveMsg {
	tb.Helper()
	for {
		select {
		case b := <-q.Messages():
			var m liveMsg
			if err := json.Unmarshal(b, &m); err != nil {
				tb.Fatalf("message %s: %v", b, err)
			}
			if slices.Contains(types, m.Type) {
				return m
			}
		case <-time.After(waitFor):
			tb.Fatalf("no %v message within %s", types, waitFor)
		}
	}
}

// lost waits until end lost a note of another node.
func lost(tb testing.TB, end *hub.LocalEnd) {
	tb.Helper()
	select {
	case <-end.Lost():
	case <-time.After(waitFor):
		tb.Fatal("the deaf end never lost a note")
	}
}

// TestPushesOnBothNodesReachEverySubscriber: pushes made on two nodes at
// once reach a subscriber on each node with strictly increasing versions
// and no gap, and every note arrives.
func TestPushesOnBothNodesReachEverySubscriber(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	qs := make([]*roomstest.Queue, 2)
	for i, h := range cl.hubs {
		qs[i] = roomstest.NewQueue(1024)
		s, _, err := h.Subscribe(ctx, "b1", fmt.Sprintf("c%d", i), fmt.Sprintf("u%d@example.com", i), qs[i])
		if err != nil {
			t.Fatal(err)
		}
		defer s.Leave()
	}
	const each = 20
	var wg sync.WaitGroup
	for i, h := range cl.hubs {
		wg.Go(func() {
			for j := range each {
				if _, _, err := h.Push(ctx, "b1", onePush(fmt.Sprintf("n%d-%d", i, j)), ""); err != nil {
					t.Errorf("push on node %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	for i, q := range qs {
		var v int64
		seen := map[string]bool{}
		for v < 2*each {
			m := next(t, q, livewire.TypeChanges)
			if m.Since > v {
				t.Fatalf("node %d: changes since %d after version %d: a gap", i, m.Since, v)
			}
			if m.ServerVersion <= v {
				t.Fatalf("node %d: changes to version %d after version %d: not increasing", i, m.ServerVersion, v)
			}
			for _, n := range m.Notes {
				seen[n.ID] = true
			}
			v = m.ServerVersion
		}
		if len(seen) != 2*each {
			t.Fatalf("node %d: subscriber saw %d notes, want %d", i, len(seen), 2*each)
		}
	}
}

// TestMergeEventsCrossNodes: what a merge on one node overwrote is told to
// the subscribers of the other node too (the rows reach them through the
// catch-up, the events in a message of their own).
func TestMergeEventsCrossNodes(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	q := roomstest.NewQueue(256)
	s, _, err := cl.hubs[1].Subscribe(ctx, "b1", "cb", "bob@example.com", q)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Leave()
	edit := func(content string, base int64) *board.Push {
		return &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1", Content: content, BaseVersion: base}}}}
	}
	for _, p := range []*board.Push{edit("a\nb", 0), edit("A\nb", 1), edit("X\nb", 1)} {
		if _, _, err := cl.hubs[0].Push(ctx, "b1", p, ""); err != nil {
			t.Fatal(err)
		}
	}
	m := next(t, q, livewire.TypeEvents)
	if len(m.Events) != 1 || m.Events[0].Kind != "overlap" || m.Events[0].ID != "n1" || m.Events[0].Version != 2 || m.Events[0].LogKey == "" {
		t.Fatalf("bob on node B got events %+v, want the overlap with version 2", m.Events)
	}
}

// TestLostNoteRepairedByRecheck: a note node B never got delays the change
// until B's slow timer rechecks the board, and no longer.
func TestLostNoteRepairedByRecheck(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	q := roomstest.NewQueue(64)
	s, w, err := cl.hubs[1].Subscribe(ctx, "b1", "c1", "b@example.com", q)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Leave()
	cl.ends[1].SetDeaf(true)
	if _, _, err := cl.hubs[0].Push(ctx, "b1", onePush("n1"), ""); err != nil {
		t.Fatal(err)
	}
	lost(t, cl.ends[1])
	cl.ends[1].SetDeaf(false)
	cl.hubs[1].Tick(ctx)
	m := next(t, q, livewire.TypeChanges)
	if m.Since != w.ServerVersion || m.ServerVersion != 1 || len(m.Notes) != 1 || m.Notes[0].ID != "n1" {
		t.Fatalf("after the recheck: %+v, want since %d to version 1 with n1", m, w.ServerVersion)
	}
}

// TestReconnectRechecksEveryBoard: after its bus reconnects, a node rechecks
// every board it serves, so changes whose notes it missed reach its
// subscribers at once, and its rooms' versions are current.
func TestReconnectRechecksEveryBoard(t *testing.T) {
	cl := newCluster(t, 2, "b1", "b2")
	ctx := context.Background()
	q := roomstest.NewQueue(64)
	s, _, err := cl.hubs[1].Subscribe(ctx, "b1", "c1", "b@example.com", q)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Leave()
	if _, err := cl.hubs[1].Pull(ctx, "b2", 0); err != nil { // a room without subscribers
		t.Fatal(err)
	}
	cl.ends[1].SetDeaf(true)
	for _, b := range []string{"b1", "b2"} {
		if _, _, err := cl.hubs[0].Push(ctx, b, onePush("n1"), ""); err != nil {
			t.Fatal(err)
		}
		lost(t, cl.ends[1])
	}
	cl.ends[1].Reconnect()
	if m := next(t, q, livewire.TypeChanges); m.ServerVersion != 1 {
		t.Fatalf("after the reconnect: %+v, want version 1", m)
	}
	r, err := cl.hubs[1].Room(ctx, "b2")
	if err != nil {
		t.Fatal(err)
	}
	// Advance is asynchronous; a pull goes through the room's loop after it.
	if res, err := cl.hubs[1].Pull(ctx, "b2", 1); err != nil || res.ServerVersion != 1 || res.Changes != nil || r.Version() != 1 {
		t.Fatalf("b2 on node 1 after the reconnect: %+v %v, room at %d; want version 1, nothing new", res, err, r.Version())
	}
}

// TestPullOnOtherNodeSeesPush: a pull on node B that would find nothing
// new in its room's memory asks the store, and sees a push made on A whose
// note B lost, at once (no clock has to pass).
func TestPullOnOtherNodeSeesPush(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	if _, _, err := cl.hubs[0].Push(ctx, "b1", onePush("n1"), ""); err != nil {
		t.Fatal(err)
	}
	if res, err := cl.hubs[1].Pull(ctx, "b1", 0); err != nil || res.ServerVersion != 1 {
		t.Fatalf("pull on B: %+v %v", res, err)
	}
	cl.ends[1].SetDeaf(true)
	if _, _, err := cl.hubs[0].Push(ctx, "b1", onePush("n2"), ""); err != nil {
		t.Fatal(err)
	}
	lost(t, cl.ends[1])
	res, err := cl.hubs[1].Pull(ctx, "b1", 1)
	if err != nil || res.ServerVersion != 2 || res.Changes == nil || len(res.Changes.Notes) != 1 || res.Changes.Notes[0].ID != "n2" {
		t.Fatalf("pull since 1 on B: %+v %v, want version 2 with n2", res, err)
	}
	// The pull told B's room: a long poll from 1 is answered at once.
	wt, err := cl.hubs[1].Wait(ctx, "b1", "x@example.com", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Stop()
	select {
	case e := <-wt.Ended():
		if e.Version != 2 {
			t.Fatalf("wait from 1: %+v", e)
		}
	case <-time.After(waitFor):
		t.Fatal("wait from 1 was not answered")
	}
}

// TestLongPollOnOtherNode: a poll held on B is answered by a push on A.
func TestLongPollOnOtherNode(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	if _, _, err := cl.hubs[0].Push(ctx, "b1", onePush("n1"), ""); err != nil {
		t.Fatal(err)
	}
	wt, err := cl.hubs[1].Wait(ctx, "b1", "x@example.com", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Stop()
	if _, _, err := cl.hubs[0].Push(ctx, "b1", onePush("n2"), ""); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-wt.Ended():
		if e.Version != 2 || e.Reason != rooms.WaitPassed {
			t.Fatalf("wait from 1: %+v, want version 2", e)
		}
	case <-time.After(waitFor):
		t.Fatal("the poll on B was not answered")
	}
}

// TestPresenceCrossesNodes: connections on two nodes see each other join,
// point and leave; a node that goes silent has its connections leave.
func TestPresenceCrossesNodes(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	qa, qb := roomstest.NewQueue(256), roomstest.NewQueue(256)
	sa, _, err := cl.hubs[0].Subscribe(ctx, "b1", "ca", "ann@example.com", qa)
	if err != nil {
		t.Fatal(err)
	}
	sb, wb, err := cl.hubs[1].Subscribe(ctx, "b1", "cb", "bob@example.com", qb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Leave()
	// Ann is in Bob's welcome, or joins right after it.
	if !slices.ContainsFunc(wb.Present, func(p livewire.Presence) bool { return p.ID == "ca" }) {
		waitPresence(t, qb, "joined", "ca")
	}
	waitPresence(t, qa, "joined", "cb")
	if err := sa.Pointer(12.5, -3); err != nil {
		t.Fatal(err)
	}
	if m := next(t, qb, livewire.TypePointer); m.Type != livewire.TypePointer || m.ID != "ca" || m.X != 12.5 || m.Y != -3 {
		t.Fatalf("bob saw %+v, want ann's pointer at 12.5,-3", m)
	}
	checkEditingCrosses(t, cl, sa, qb)
	sa.Leave()
	waitPresence(t, qb, "left", "ca")
	checkSilentNodeLeaves(t, cl, qb)
}

// checkEditingCrosses: who is editing which note crosses too (ann, sa, on
// node A; bob's queue qb on B), and a late joiner on the other node finds
// it in its hello.
func checkEditingCrosses(t *testing.T, cl *cluster, sa *rooms.Subscriber, qb *roomstest.Queue) {
	t.Helper()
	ctx := context.Background()
	if err := sa.Editing("n7"); err != nil {
		t.Fatal(err)
	}
	if m := next(t, qb, livewire.TypeEditing); m.Type != livewire.TypeEditing || m.ID != "ca" || m.NoteID != "n7" {
		t.Fatalf("bob saw %+v, want ann editing n7", m)
	}
	sd, wd, err := cl.hubs[1].Subscribe(ctx, "b1", "cd", "dan@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(wd.Present, func(p livewire.Presence) bool { return p.ID == "ca" }); i < 0 || wd.Present[i].Editing != "n7" {
		t.Fatalf("dan's hello on node B lists %+v, want ann editing n7", wd.Present)
	}
	sd.Leave()
}

// checkSilentNodeLeaves: Carl joins on A, then A goes silent (it never
// ticks here): after a few rounds of B's timer Bob (qb) sees Carl leave;
// when A speaks again, Carl is back.
func checkSilentNodeLeaves(t *testing.T, cl *cluster, qb *roomstest.Queue) {
	t.Helper()
	ctx := context.Background()
	sc, _, err := cl.hubs[0].Subscribe(ctx, "b1", "cc", "carl@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Leave()
	waitPresence(t, qb, "joined", "cc")
	for range 5 {
		cl.hubs[1].Tick(ctx)
	}
	waitPresence(t, qb, "left", "cc")
	// A speaks again (a stopped process resumed): the first note B hears
	// from it makes B ask who is there, and Carl is back.
	cl.hubs[0].Tick(ctx)
	waitPresence(t, qb, "joined", "cc")
}

// TestNodeGoodbye: a node that closes takes its connections away from the
// others' presence at once.
func TestNodeGoodbye(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	qb := roomstest.NewQueue(256)
	sb, _, err := cl.hubs[1].Subscribe(ctx, "b1", "cb", "bob@example.com", qb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Leave()
	sa, _, err := cl.hubs[0].Subscribe(ctx, "b1", "ca", "ann@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	waitPresence(t, qb, "joined", "ca")
	go func() { <-sa.Done(); sa.Leave() }()
	c, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	if err := cl.hubs[0].Close(c); err != nil {
		t.Fatal(err)
	}
	waitPresence(t, qb, "left", "ca")
}

// TestKickCrossesNodes: removing an invitee on node A closes their socket
// on node B with 4003 and answers their poll held on B.
func TestKickCrossesNodes(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	s, w, err := cl.hubs[1].Subscribe(ctx, "b1", "cg", "guest@example.com", roomstest.NewQueue(64))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Leave()
	wt, err := cl.hubs[1].Wait(ctx, "b1", "guest@example.com", w.ServerVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Stop()
	cl.hubs[0].Kick("b1", "guest@example.com")
	select {
	case <-s.Done():
		if code, _ := s.CloseStatus(); code != livewire.CloseForbidden {
			t.Fatalf("socket closed with %d, want %d", code, livewire.CloseForbidden)
		}
	case <-time.After(waitFor):
		t.Fatal("the guest's socket on B stayed open")
	}
	select {
	case e := <-wt.Ended():
		if e.Reason != rooms.WaitKicked {
			t.Fatalf("poll ended with %+v, want kicked", e)
		}
	case <-time.After(waitFor):
		t.Fatal("the guest's poll on B was not answered")
	}
}

// TestInvalidateCrossesNodes: an invalidation on A reaches B's hook, and
// not A's own.
func TestInvalidateCrossesNodes(t *testing.T) {
	cl := newCluster(t, 2)
	cl.hubs[0].Invalidate("session", "abc123")
	select {
	case got := <-cl.inval:
		if got != [3]string{"1", "session", "abc123"} {
			t.Fatalf("invalidation %v, want node 1 told of session abc123", got)
		}
	case <-time.After(waitFor):
		t.Fatal("node 1 was not told")
	}
}

// TestNotePayloadsStayUnderTheLimit: however many pointers wait, each
// payload stays under the limit, and every note is in exactly one.
func TestNotePayloadsStayUnderTheLimit(t *testing.T) {
	var conns, emails []string
	for i := range 500 {
		conns = append(conns, fmt.Sprintf("conn%08d", i))
		emails = append(emails, strings.Repeat("x", 200)+fmt.Sprintf("%d@example.com", i))
	}
	payloads := hub.PackForTest("node0", conns, emails, hub.MaxNotePayload)
	if len(payloads) < 2 {
		t.Fatalf("%d payloads for 500 long notes, want several", len(payloads))
	}
	seen := map[string]int{}
	for _, p := range payloads {
		if len(p) > hub.MaxNotePayload {
			t.Fatalf("payload of %d bytes, over %d", len(p), hub.MaxNotePayload)
		}
		var env struct {
			N string `json:"n"`
			M []struct {
				I string `json:"i"`
			} `json:"m"`
		}
		if err := json.Unmarshal(p, &env); err != nil || env.N != "node0" {
			t.Fatalf("payload %.80s…: %v", p, err)
		}
		for _, m := range env.M {
			seen[m.I]++
		}
	}
	for _, c := range conns {
		if seen[c] != 1 {
			t.Fatalf("%s in %d payloads, want 1", c, seen[c])
		}
	}
}

// TestLongPollAheadOfTheRoom: a client that pushed on A and then waits on
// B from its new version, before B heard of it, is never answered with a
// version below its own.
func TestLongPollAheadOfTheRoom(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	if _, err := cl.hubs[1].Pull(ctx, "b1", 0); err != nil { // B's room, at 0
		t.Fatal(err)
	}
	cl.ends[1].SetDeaf(true)
	v, _, err := cl.hubs[0].Push(ctx, "b1", onePush("n1"), "")
	if err != nil {
		t.Fatal(err)
	}
	wt, err := cl.hubs[1].Wait(ctx, "b1", "x@example.com", v)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Stop()
	select {
	case e := <-wt.Ended():
		if e.Version < v {
			t.Fatalf("wait from %d on B answered %+v: below the client's version", v, e)
		}
	case <-time.After(waitFor):
		t.Fatal("wait was not answered")
	}
}

// TestRecheckTimerRuns: with PollEvery set, the hub's own timer rechecks
// (nobody calls Tick): a change whose note was lost still arrives.
func TestRecheckTimerRuns(t *testing.T) {
	db, c, _ := persisttest.Open(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), "b1")
	bus := hub.NewLocalBus()
	var hubs []*hub.Hub
	var ends []*hub.LocalEnd
	for range 2 {
		end := bus.End()
		h := hub.New(db, hub.Options{Now: c.Now, IdleTimeout: time.Hour, SweepEvery: -1, Bus: end, PollEvery: time.Millisecond})
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			if err := h.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		hubs, ends = append(hubs, h), append(ends, end)
	}
	ctx := context.Background()
	q := roomstest.NewQueue(64)
	s, _, err := hubs[1].Subscribe(ctx, "b1", "c1", "b@example.com", q)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Leave()
	ends[1].SetDeaf(true)
	if _, _, err := hubs[0].Push(ctx, "b1", onePush("n1"), ""); err != nil {
		t.Fatal(err)
	}
	if m := next(t, q, livewire.TypeChanges); m.ServerVersion != 1 {
		t.Fatalf("got %+v, want version 1", m)
	}
}

// TestFollowCrossesNodes: bob on B follows ann on A: A learns of it and
// sends ann's latest view at once, then her next; her summon reaches bob;
// her leaving ends bob's following.
func TestFollowCrossesNodes(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	qa, qb := roomstest.NewQueue(256), roomstest.NewQueue(256)
	sa, _, err := cl.hubs[0].Subscribe(ctx, "b1", "ca", "ann@example.com", qa)
	if err != nil {
		t.Fatal(err)
	}
	sb, wb, err := cl.hubs[1].Subscribe(ctx, "b1", "cb", "bob@example.com", qb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Leave()
	if !slices.ContainsFunc(wb.Present, func(p livewire.Presence) bool { return p.ID == "ca" }) {
		waitPresence(t, qb, "joined", "ca")
	}
	if err := sa.View(10, 20, 2); err != nil {
		t.Fatal(err)
	}
	if err := sb.Follow("ca"); err != nil {
		t.Fatal(err)
	}
	if m := next(t, qb, livewire.TypeView); m.ID != "ca" || m.X != 10 || m.Y != 20 || m.Zoom != 2 {
		t.Fatalf("bob got %+v, want ann's view at once", m)
	}
	if err := sa.View(30, 40, 1); err != nil {
		t.Fatal(err)
	}
	for m := next(t, qb, livewire.TypeView); m.X != 30; m = next(t, qb, livewire.TypeView) {
	}
	if err := sa.Summon(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	if m := next(t, qb, livewire.TypeSummon); m.ID != "ca" || m.Zoom != 3 {
		t.Fatalf("bob got %+v, want ann's summon", m)
	}
	sa.Leave()
	if m := next(t, qb, livewire.TypeFollow); m.Ended != "ca" {
		t.Fatalf("bob got %+v, want his following of ann ended", m)
	}
}
