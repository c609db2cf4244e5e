package rooms_test

import (
	"context"
	"strings"
	"testing"

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
