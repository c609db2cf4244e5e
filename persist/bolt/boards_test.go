package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist/bolt"
)

// openDB opens a store in a fresh temp folder with a controllable clock.
func openDB(tb testing.TB) (*bolt.DB, string) {
	tb.Helper()
	dir := tb.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, dir
}

func TestOpenLockedFailsFast(t *testing.T) {
	_, dir := openDB(t)
	start := time.Now()
	_, err := bolt.Open(dir)
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("second Open err=%v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("second Open took %v, want it to fail fast", d)
	}
}

func TestSecretSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s1 := append([]byte(nil), db.Secret()...)
	db.Close()
	db, err = bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(s1) != 32 || string(s1) != string(db.Secret()) {
		t.Fatalf("secret changed across reopen or wrong size (%d bytes)", len(s1))
	}
}

func TestBoardsLifecycle(t *testing.T) {
	ctx := context.Background()
	db, dir := openDB(t)
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return clock }

	if _, err := db.FindBoard(ctx, "b1"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("FindBoard unclaimed: err=%v, want not_found", err)
	}
	if _, err := db.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatalf("ClaimBoard: %v", err)
	}
	if _, err := db.ClaimBoard(ctx, "b1", "other@example.com"); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("second ClaimBoard err=%v, want conflict", err)
	}
	clock = clock.Add(time.Hour)
	if _, err := db.ClaimBoard(ctx, "b2", "other@example.com"); err != nil {
		t.Fatal(err)
	}

	t.Run("invites", func(t *testing.T) {
		if _, _, err := db.AddInvite(ctx, "b1", "owner@example.com"); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("invite owner: err=%v, want invalid", err)
		}
		b, added, err := db.AddInvite(ctx, "b1", "friend@example.com")
		if err != nil || !added {
			t.Fatalf("AddInvite=%v,%v", added, err)
		}
		if _, added, _ := db.AddInvite(ctx, "b1", "friend@example.com"); added {
			t.Fatal("second AddInvite reported added")
		}
		if got := b.InvitedEmails; len(got) != 1 || got[0] != "friend@example.com" {
			t.Fatalf("InvitedEmails=%v", got)
		}
		if _, _, err := db.AddInvite(ctx, "b2", "friend@example.com"); err != nil {
			t.Fatal(err)
		}
		list, err := db.ListBoardsFor(ctx, "friend@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != "b2" || list[1].ID != "b1" {
			t.Fatalf("ListBoardsFor friend = %v, want b2 then b1 (newest first)", ids(list))
		}
		if _, removed, err := db.RemoveInvite(ctx, "b2", "friend@example.com"); err != nil || !removed {
			t.Fatalf("RemoveInvite=%v,%v", removed, err)
		}
		if _, removed, _ := db.RemoveInvite(ctx, "b2", "friend@example.com"); removed {
			t.Fatal("second RemoveInvite reported removed")
		}
		list, _ = db.ListBoardsFor(ctx, "friend@example.com")
		if len(list) != 1 || list[0].ID != "b1" {
			t.Fatalf("after removal ListBoardsFor = %v, want [b1]", ids(list))
		}
	})

	t.Run("survives reopen", func(t *testing.T) {
		db.Close()
		db2, err := bolt.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer db2.Close()
		b, err := db2.FindBoard(ctx, "b1")
		if err != nil {
			t.Fatal(err)
		}
		if b.OwnerEmail != "owner@example.com" || len(b.InvitedEmails) != 1 || !b.CreatedAt.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
			t.Fatalf("board after reopen = %+v", b)
		}
		list, _ := db2.ListBoardsFor(ctx, "owner@example.com")
		if len(list) != 1 {
			t.Fatalf("owner list after reopen = %v", ids(list))
		}
	})
}

func ids(bs []board.Board) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	return out
}

func TestInviteCap(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	if _, err := db.ClaimBoard(ctx, "b", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	for i := range board.MaxInvites {
		if _, added, err := db.AddInvite(ctx, "b", fmt.Sprintf("u%d@example.com", i)); err != nil || !added {
			t.Fatalf("invite %d: added=%v err=%v", i, added, err)
		}
	}
	if _, _, err := db.AddInvite(ctx, "b", "one-too-many@example.com"); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("invite past the cap: err=%v, want invalid", err)
	}
	// Re-inviting someone already there is still fine at the cap.
	if _, added, err := db.AddInvite(ctx, "b", "u0@example.com"); err != nil || added {
		t.Fatalf("re-invite at the cap: added=%v err=%v", added, err)
	}
}
