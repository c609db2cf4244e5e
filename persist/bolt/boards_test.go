package bolt_test

import (
	"context"
	"errors"
	"testing"
	"time"

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

// TestBoardsSurviveReopen: boards, their collaborators and the member
// index are in the file, not in memory.
func TestBoardsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	db, dir := openDB(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return t0 }
	if _, err := db.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddInvite(ctx, "b1", "friend@example.com"); err != nil {
		t.Fatal(err)
	}
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
	if b.OwnerEmail != "owner@example.com" || len(b.InvitedEmails) != 1 || !b.CreatedAt.Equal(t0) {
		t.Fatalf("board after reopen = %+v", b)
	}
	for _, email := range []string{"owner@example.com", "friend@example.com"} {
		if list, err := db2.ListBoardsFor(ctx, email); err != nil || len(list) != 1 || list[0].ID != "b1" {
			t.Fatalf("ListBoardsFor(%s) after reopen = %v, %v; want [b1]", email, list, err)
		}
	}
}
