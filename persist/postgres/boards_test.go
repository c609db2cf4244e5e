package postgres_test

import (
	"context"
	"testing"
	"time"

	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
)

func TestSecretSurvivesReopen(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	s1 := append([]byte(nil), db.Secret()...)
	db.Close()
	db, err = postgres.Open(context.Background(), dsn)
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
	db, dsn := openDB(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return t0 }
	if _, err := db.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddInvite(ctx, "b1", "friend@example.com"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := postgres.Open(context.Background(), dsn)
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

// openDB opens a store on a fresh database and returns it with the DSN (to
// open the database again, as another node would).
func openDB(tb testing.TB) (*postgres.Store, string) {
	tb.Helper()
	dsn := pgtest.NewDatabase(tb)
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, dsn
}
