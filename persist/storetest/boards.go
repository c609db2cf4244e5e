package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// runBoards: claiming, invites and the member list (persist.BoardStore).
func runBoards(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"lifecycle", testBoardLifecycle},
		{"same creation time lists by ID", testBoardsSameCreationTime},
		{"invite cap", testInviteCap},
		{"phases", testPhases},
		{"concurrent claims have one winner", testConcurrentClaims},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
	}
}

// testBoardLifecycle claims two boards, invites to both, removes an
// invite, and checks whose lists show which board at every step.
func testBoardLifecycle(t *testing.T, open Opener) {
	e := newEnv(t, open)
	claimTwoBoards(t, e)
	inviteToBoth(t, e.s)
	removeInvite(t, e.s)
}

// claimTwoBoards claims b1 (for owner@) and, an hour later, b2 (for
// other@), and checks that a claimed board cannot be claimed again.
func claimTwoBoards(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	s := e.s
	if _, err := s.FindBoard(ctx, "b1"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("FindBoard unclaimed: err=%v, want not_found", err)
	}
	b, err := s.ClaimBoard(ctx, "b1", "owner@example.com")
	if err != nil {
		t.Fatalf("ClaimBoard: %v", err)
	}
	if b.OwnerEmail != "owner@example.com" || !b.CreatedAt.Equal(T0) || b.InvitedEmails == nil || len(b.InvitedEmails) != 0 {
		t.Fatalf("claimed board = %+v, want owner, CreatedAt at the store's clock, no invitees", b)
	}
	if _, err := s.ClaimBoard(ctx, "b1", "other@example.com"); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("second ClaimBoard err=%v, want conflict", err)
	}
	if got, err := s.FindBoard(ctx, "b1"); err != nil || got.OwnerEmail != "owner@example.com" {
		t.Fatalf("FindBoard after a refused claim = %+v, %v; want the first owner", got, err)
	}
	e.clock.Advance(time.Hour)
	if _, err := s.ClaimBoard(ctx, "b2", "other@example.com"); err != nil {
		t.Fatal(err)
	}
}

// inviteToBoth invites friend@ to b1 and b2 and checks that friend@'s list
// shows both, newest first.
func inviteToBoth(t *testing.T, s persist.Store) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := s.AddInvite(ctx, "b1", "owner@example.com"); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("invite owner: err=%v, want invalid", err)
	}
	b, added, err := s.AddInvite(ctx, "b1", "friend@example.com")
	if err != nil || !added {
		t.Fatalf("AddInvite=%v,%v", added, err)
	}
	if got := b.InvitedEmails; len(got) != 1 || got[0] != "friend@example.com" {
		t.Fatalf("InvitedEmails=%v", got)
	}
	if _, added, err := s.AddInvite(ctx, "b1", "friend@example.com"); err != nil || added {
		t.Fatalf("second AddInvite = %v, %v; want not added, no error", added, err)
	}
	if _, _, err := s.AddInvite(ctx, "nope", "friend@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("AddInvite on an unclaimed board: err=%v, want not_found", err)
	}
	if _, _, err := s.AddInvite(ctx, "b2", "friend@example.com"); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListBoardsFor(ctx, "friend@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got := boardIDs(list); fmt.Sprint(got) != "[b2 b1]" {
		t.Fatalf("ListBoardsFor friend = %v, want [b2 b1] (newest first)", got)
	}
}

// removeInvite removes friend@ from b2 and checks every list after it.
func removeInvite(t *testing.T, s persist.Store) {
	t.Helper()
	ctx := context.Background()
	if _, removed, err := s.RemoveInvite(ctx, "b2", "friend@example.com"); err != nil || !removed {
		t.Fatalf("RemoveInvite=%v,%v", removed, err)
	}
	if _, removed, err := s.RemoveInvite(ctx, "b2", "friend@example.com"); err != nil || removed {
		t.Fatalf("second RemoveInvite = %v, %v; want not removed, no error", removed, err)
	}
	if _, _, err := s.RemoveInvite(ctx, "nope", "friend@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("RemoveInvite on an unclaimed board: err=%v, want not_found", err)
	}
	list, _ := s.ListBoardsFor(ctx, "friend@example.com")
	if got := boardIDs(list); fmt.Sprint(got) != "[b1]" {
		t.Fatalf("after removal ListBoardsFor = %v, want [b1]", got)
	}
	if b, err := s.FindBoard(ctx, "b2"); err != nil || len(b.InvitedEmails) != 0 {
		t.Fatalf("b2 after removal = %+v, %v; want no invitees", b, err)
	}
	list, _ = s.ListBoardsFor(ctx, "owner@example.com")
	if got := boardIDs(list); fmt.Sprint(got) != "[b1]" {
		t.Fatalf("ListBoardsFor owner = %v, want [b1]", got)
	}
	list, err := s.ListBoardsFor(ctx, "nobody@example.com")
	if err != nil || list == nil || len(list) != 0 {
		t.Fatalf("ListBoardsFor a stranger = %#v, %v; want an empty, non-nil list", list, err)
	}
}

// testBoardsSameCreationTime: boards claimed at the same instant list by ID.
func testBoardsSameCreationTime(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEnv(t, open)
	for _, id := range []string{"c", "a", "b"} {
		if _, err := e.s.ClaimBoard(ctx, id, "owner@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	list, err := e.s.ListBoardsFor(ctx, "owner@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got := boardIDs(list); fmt.Sprint(got) != "[a b c]" {
		t.Fatalf("ListBoardsFor = %v, want [a b c]", got)
	}
}

// testInviteCap: a board takes board.MaxInvites invitees and no more.
func testInviteCap(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEnv(t, open)
	s := e.s
	if _, err := s.ClaimBoard(ctx, "b", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	for i := range board.MaxInvites {
		if _, added, err := s.AddInvite(ctx, "b", fmt.Sprintf("u%d@example.com", i)); err != nil || !added {
			t.Fatalf("invite %d: added=%v err=%v", i, added, err)
		}
	}
	_, _, err := s.AddInvite(ctx, "b", "one-too-many@example.com")
	if board.ErrorCode(err) != board.EINVALID || errField(err) != "email" {
		t.Fatalf("invite past the cap: err=%v, want invalid naming email", err)
	}
	// Re-inviting someone already there is still fine at the cap.
	if _, added, err := s.AddInvite(ctx, "b", "u0@example.com"); err != nil || added {
		t.Fatalf("re-invite at the cap: added=%v err=%v", added, err)
	}
	if b, _ := s.FindBoard(ctx, "b"); len(b.InvitedEmails) != board.MaxInvites {
		t.Fatalf("%d invitees, want %d", len(b.InvitedEmails), board.MaxInvites)
	}
}

// testPhases: SetPhases stores the phases without moving the version.
func testPhases(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEnv(t, open)
	if _, err := e.s.SetPhases(ctx, "nope", nil); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("SetPhases unclaimed: err=%v, want not_found", err)
	}
	if _, err := e.s.ClaimBoard(ctx, "b", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	ph := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"p1","name":"Ideas"}`)}, CurrentPhaseID: "p1"}
	if _, err := e.s.SetPhases(ctx, "b", ph); err != nil {
		t.Fatal(err)
	}
	b, err := e.s.FindBoard(ctx, "b")
	if err != nil || b.Phases == nil || b.Phases.CurrentPhaseID != "p1" || len(b.Phases.Phases) != 1 {
		t.Fatalf("board after SetPhases = %+v, %v", b, err)
	}
	if v, err := e.s.CurrentVersion(ctx, "b"); err != nil || v != 0 {
		t.Fatalf("version after SetPhases = %d, %v; want 0 (phases do not move it)", v, err)
	}
}

// testConcurrentClaims: of concurrent claims of one board, exactly one wins.
func testConcurrentClaims(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEnv(t, open)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.s.ClaimBoard(ctx, "b", fmt.Sprintf("u%d@example.com", i))
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("claims %d and %d both won", won, i)
		case err == nil:
			won = i
		case board.ErrorCode(err) != board.ECONFLICT:
			t.Fatalf("claim %d: %v, want conflict", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no claim won")
	}
	b, err := e.s.FindBoard(ctx, "b")
	if err != nil || b.OwnerEmail != fmt.Sprintf("u%d@example.com", won) {
		t.Fatalf("owner = %+v, %v; want the winner u%d", b, err, won)
	}
}

func boardIDs(bs []board.Board) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	return out
}
