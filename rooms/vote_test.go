package rooms_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/rooms"
)

// TestVoteReachesEveryone: a vote action and a dot are pushes like any
// other: every subscriber (the voter too) gets a changes message whose
// header has the new totals and never who voted for what before the
// reveal; a refused dot tells nobody.
func TestVoteReachesEveryone(t *testing.T) {
	db := openStore(t)
	r := startRoom(t, db, rooms.Options{})
	a, _ := subscribe(t, r, "A", "ann@example.com")
	ctx := context.Background()
	if _, _, err := r.Push(ctx, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1", UpdatedAt: "2026-11-27T09:00:00Z"}}}}, ""); err != nil {
		t.Fatal(err)
	}
	next(t, a)
	act := board.NewVoteAction()
	act.Action, act.ID, act.By, act.Anonymous = board.VoteStart, "v1", "owner@example.com", false
	if _, _, err := r.Push(ctx, &board.Push{Vote: &act}, ""); err != nil {
		t.Fatal(err)
	}
	if m := next(t, a); m.ServerVersion != 2 || m.Board.Vote == nil || m.Board.Vote.State != board.VoteOpen {
		t.Fatalf("A got %+v, want changes at 2 with the open vote", m)
	}
	v, _, err := r.Push(ctx, &board.Push{Dot: &board.VoteDot{NoteID: "n1", Delta: 1, By: "ann@example.com"}}, "")
	if err != nil || v != 3 {
		t.Fatalf("dot: v=%d err=%v, want version 3", v, err)
	}
	b := <-messages(a)
	if strings.Contains(string(b), "ann@example.com") || !strings.Contains(string(b), `"voters":1,"dots":1`) || !strings.Contains(string(b), `"serverVersion":3`) {
		t.Fatalf("A got %s, want the totals at 3 and nobody's address", b)
	}
	if _, _, err := r.Push(ctx, &board.Push{Dot: &board.VoteDot{NoteID: "n1", Delta: 1, By: "ann@example.com"}}, ""); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("a second dot on n1 (perNote 1): err=%v, want ECONFLICT", err)
	}
	noMessage(t, a)
	act = board.VoteAction{Action: board.VoteReveal, By: "owner@example.com"}
	if _, _, err := r.Push(ctx, &board.Push{Vote: &act}, ""); err != nil {
		t.Fatal(err)
	}
	if m := next(t, a); m.ServerVersion != 4 || m.Board.Vote == nil || len(m.Board.Vote.Results) != 1 || m.Board.Vote.Results[0].Voters[0] != "ann@example.com" {
		t.Fatalf("A got %+v, want the results at 4", m)
	}
}

// TestHeaderOnlyChangesFold: dots committed together (queued behind a
// commit) reach a subscriber as one changes message from the version
// before the first to the last, with the header as the last left it; a
// change with rows between them is not folded, and every caller still
// gets its own version.
func TestHeaderOnlyChangesFold(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	act := board.NewVoteAction()
	act.Action, act.ID, act.By, act.PerPerson = board.VoteStart, "v1", "owner@example.com", 9
	for _, p := range []*board.Push{onePush("n1", "x"), {Vote: &act}} {
		if _, _, err := db.ApplyPush(ctx, "b1", p, ""); err != nil {
			t.Fatal(err)
		}
	}
	store := newGatedStore(db)
	arrived := make(chan struct{}, 16)
	// No presence tick or idle sweep: nothing but requests reads the clock.
	r := startRoom(t, store, rooms.Options{Now: arrivalClock(arrived), AfterFunc: func(time.Duration, func()) {}})
	await(t, arrived, "the room's start")
	a, _ := subscribe(t, r, "A", "a@example.com")
	// The join has been served (Subscribe waits for it): drop the clock
	// readings it made, however many, so that each one after is a push.
	for len(arrived) > 0 {
		<-arrived
	}
	dot := func(who string) *board.Push {
		return &board.Push{Dot: &board.VoteDot{NoteID: "n1", Delta: 1, By: who}}
	}
	first := queuePush(t, r, arrived, dot("p0@example.com")) // held: the next queue behind it
	await(t, store.started, "the first commit")
	var outs []<-chan pushOutcome
	for _, p := range []*board.Push{dot("p1@example.com"), dot("p2@example.com"), dot("p3@example.com"), onePush("n2", "y"), dot("p4@example.com"), dot("p5@example.com")} {
		outs = append(outs, queuePush(t, r, arrived, p))
	}
	close(store.release)
	if o := result(t, first); o.err != nil || o.version != 3 {
		t.Fatalf("first dot: %+v, want version 3", o)
	}
	for i, o := range outs {
		if got := result(t, o); got.err != nil || got.version != int64(4+i) {
			t.Fatalf("push %d: %+v, want version %d", i, got, 4+i)
		}
	}
	want := []struct {
		since, version int64
		notes, dots    int
	}{{2, 3, 0, 1}, {3, 6, 0, 4}, {6, 7, 1, 4}, {7, 9, 0, 6}}
	for _, w := range want {
		m := next(t, a)
		if m.Since != w.since || m.ServerVersion != w.version || len(m.Notes) != w.notes || m.Board.Vote == nil || m.Board.Vote.Dots != w.dots || m.Board.Version != w.version {
			t.Fatalf("A got since %d, version %d, %d notes, vote %+v; want since %d, version %d, %d notes, %d dots",
				m.Since, m.ServerVersion, len(m.Notes), m.Board.Vote, w.since, w.version, w.notes, w.dots)
		}
	}
	noMessage(t, a)
}
